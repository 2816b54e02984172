// Drives the playground in headless Debian Chromium with playwright-core.
// Usage: node tests/browser/playground.mjs BASE_URL API_KEY MICROPHONE_WAV SCREENSHOT_DIR [no-model|model]
// ("model": the server has a speech recognition model, so spoken turns get transcripts; default "no-model")
// Exits non-zero with a message on the first failed expectation.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";

// playwright-core is installed by tools/test.sh under target/browser (NODE_PATH names that node_modules).
const require = createRequire(`${process.env.NODE_PATH}/`);
const { chromium } = require("playwright-core");

const [base, key, microphone, shots, mode = "no-model"] = process.argv.slice(2);
mkdirSync(shots, { recursive: true });

function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
    "--disable-extensions", "--no-first-run", "--mute-audio", "--autoplay-policy=no-user-gesture-required",
    "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
    `--use-file-for-fake-audio-capture=${microphone}`,
  ],
});
try {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.grantPermissions(["microphone"], { origin: base });
  const page = await context.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(`${base}/`);
  expect((await page.title()).includes("sauti"), "the page title");

  // No key yet: the page says so. Then the key: voices load.
  expect((await page.textContent("#key-status")).includes("API key"), "asks for a key");
  await page.fill("#key", key);
  await page.click("#save-key");
  await page.waitForFunction(() => document.querySelectorAll("#tts-voice option").length >= 2);
  const voices = await page.$$eval("#tts-voice option", (o) => o.map((x) => x.value));
  expect(voices.includes("zuri") && voices.includes("baraka"), `voices listed: ${voices}`);
  expect((await page.evaluate(() => sessionStorage.getItem("sauti-key"))) === key, "the key is kept in session storage");

  // A voice whose model is not installed is listed but cannot be picked, with what to install.
  for (const select of ["#tts-voice", "#agent-voice"]) {
    const inactive = await page.$eval(`${select} option[value="mms-swh"]`, (o) => ({ disabled: o.disabled, text: o.textContent, title: o.title }));
    expect(inactive.disabled, `${select}: the inactive voice is disabled`);
    expect(inactive.text.includes("unavailable"), `${select}: the option says unavailable: ${inactive.text}`);
    expect(inactive.title.includes("sauti models fetch mms-tts-swh"), `${select}: the reason is shown: ${inactive.title}`);
    expect(!(await page.$eval(select, (s) => s.selectedOptions[0].disabled)), `${select}: an active voice is chosen`);
  }
  const zuri = await page.$eval('#tts-voice option[value="zuri"]', (o) => ({ disabled: o.disabled, text: o.textContent }));
  expect(!zuri.disabled && !zuri.text.includes("unavailable"), `an active voice is selectable: ${zuri.text}`);

  // Text to speech: the <audio> element gets a playable WAV.
  await page.fill("#tts-text", "Habari ya asubuhi, karibu Tanzania.");
  await page.click("#tts-go");
  await page.waitForFunction(() => document.querySelector("#tts-status").textContent.includes("s of audio"));
  const duration = await page.evaluate(() => new Promise((resolve, reject) => {
    const audio = document.querySelector("#tts-audio");
    if (audio.readyState >= 1) return resolve(audio.duration);
    audio.addEventListener("loadedmetadata", () => resolve(audio.duration), { once: true });
    audio.addEventListener("error", () => reject(new Error("the WAV did not load")), { once: true });
  }));
  expect(duration > 0.5 && duration < 10, `a playable WAV of ${duration} s`);
  expect(!(await page.getAttribute("#tts-download", "hidden") !== null), "a download link");
  await page.screenshot({ path: `${shots}/playground-tts.png`, fullPage: true });

  // Cloning: upload a reference (eSpeak NG, from tests/fixtures/clone), then speak with the new voice.
  await page.setInputFiles("#clone-file", new URL("../fixtures/clone/low.mp3", import.meta.url).pathname);
  await page.fill("#clone-name", "Amani");
  await page.click("#clone-go");
  await page.waitForFunction(() => /is ready/.test(document.querySelector("#clone-status").textContent), null, { timeout: 30000 })
    .catch(async () => { throw new Error(`no cloned voice: ${await page.textContent("#clone-status")}`); });
  const cloned = (await page.textContent("#clone-status")).match(/\((cv_[0-9a-f]+)\)/)[1];
  await page.waitForFunction((id) => [...document.querySelectorAll("#tts-voice option")].some((o) => o.value === id), cloned);
  await page.selectOption("#tts-voice", cloned);
  await page.fill("#tts-text", "Habari, hii ni sauti yangu mpya.");
  await page.click("#tts-go");
  await page.waitForFunction(() => /s of audio, 32 characters/.test(document.querySelector("#tts-status").textContent), null, { timeout: 30000 })
    .catch(async () => { throw new Error(`the cloned voice did not speak: ${await page.textContent("#tts-status")}`); });
  await page.screenshot({ path: `${shots}/playground-clone.png`, fullPage: true });

  // The agent, typed: a reply, its timings, and spoken audio.
  await page.selectOption("#agent-scenario", "banking");
  await page.fill("#agent-text", "Nataka kutuma pesa");
  await page.click("#agent-send");
  await page.waitForSelector("#agent-turns .turn.agent");
  const reply = await page.textContent("#agent-turns .turn.agent");
  expect(reply.toLowerCase().includes("kiasi"), `the agent asks for the amount: ${reply}`);
  expect((await page.textContent("#agent-turns .meta")).includes("total"), "timings shown");
  expect((await page.textContent("#agent-status")).includes("ses_"), "a session");

  // The conversation is in the Calls panel, its transcript a click away.
  const conversation = (await page.textContent("#agent-status")).match(/(ses_[0-9a-f]+)/)[1];
  await page.click("#calls-refresh");
  await page.waitForSelector(`#calls li[data-id="${conversation}"]`);
  await page.click(`#calls li[data-id="${conversation}"]`);
  await page.waitForSelector("#call-turns .turn.user");
  const transcript = await page.textContent("#call-turns");
  expect(transcript.includes("Nataka kutuma pesa"), `the call's transcript: ${transcript}`);
  expect((await page.textContent("#calls-status")).includes(conversation), "the call is named");

  // Hold to talk from the fake microphone: without a model the 503 is explained; with one the turn is heard.
  const talk = await page.$("#agent-talk");
  const box = await talk.boundingBox();
  const turnsBefore = (await page.$$("#agent-turns .turn.user")).length;
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  await page.waitForTimeout(2500);
  await page.mouse.up();
  if (mode === "model") {
    await page.waitForFunction((n) => document.querySelectorAll("#agent-turns .turn.user").length > n, turnsBefore, { timeout: 60000 })
      .catch(async () => { throw new Error(`no spoken turn: ${await page.textContent("#agent-status")}`); });
    const metas = await page.$$("#agent-turns .meta");
    const meta = await metas[metas.length - 1].textContent();
    expect(meta.includes("recognition"), `the recognition time is shown: ${meta}`);
    expect((await page.textContent("#agent-status")).includes("ses_"), "the spoken turn continues the session");
    await page.screenshot({ path: `${shots}/playground-agent-spoken.png`, fullPage: true });

    // A live conversation over the realtime socket: the fake microphone's turn is heard, the reply plays as
    // it arrives; stopping ends it.
    const usersBefore = (await page.$$("#agent-turns .turn.user")).length;
    const agentsBefore = (await page.$$("#agent-turns .turn.agent")).length;
    await page.click("#agent-live");
    await page.waitForFunction(([u, a]) => document.querySelectorAll("#agent-turns .turn.user").length > u
        && document.querySelectorAll("#agent-turns .turn.agent").length > a
        && Number(document.querySelector("#agent-panel").dataset.liveAudio || 0) > 0,
      [usersBefore, agentsBefore], { timeout: 60000 })
      .catch(async () => { throw new Error(`no live turn: ${await page.textContent("#agent-status")}`); });
    expect((await page.textContent("#agent-status")).includes("live"), "the status says live");
    expect((await page.textContent("#agent-live")).includes("Stop"), "the button stops the conversation");
    await page.screenshot({ path: `${shots}/playground-agent-live.png`, fullPage: true });
    await page.click("#agent-live");
    await page.waitForFunction(() => /stopped/.test(document.querySelector("#agent-status").textContent));

    // Speech recognition panel: record, stop, and the transcript appears with its duration.
    await page.click("#stt-record");
    await page.waitForTimeout(2000);
    await page.click("#stt-record");
    await page.waitForFunction(() => /language sw/.test(document.querySelector("#stt-status").textContent), null, { timeout: 60000 })
      .catch(async () => { throw new Error(`no transcript: ${await page.textContent("#stt-status")}`); });
  } else {
    await page.waitForFunction(() => document.querySelector("#agent-status").classList.contains("error"), null, { timeout: 20000 });
    const status = await page.textContent("#agent-status");
    expect(status.includes("Not available") && status.toLowerCase().includes("speech recognition"), `the 503 in words: ${status}`);
    await page.screenshot({ path: `${shots}/playground-agent.png`, fullPage: true });
    // A live conversation cannot start either, and says why before any socket is opened.
    await page.click("#agent-live");
    await page.waitForFunction(() => /Not available/.test(document.querySelector("#agent-status").textContent), null, { timeout: 20000 });
    expect((await page.textContent("#agent-live")).includes("Start"), "no live conversation without a model");
  }

  // A refused key is explained in words.
  await page.fill("#key", "not-a-valid-key-123");
  await page.click("#save-key");
  await page.waitForFunction(() => document.querySelector("#voices-status").classList.contains("error"));
  expect((await page.textContent("#voices-status")).includes("API key was refused"), "401 in words");

  expect(errors.length === 0, `no script errors: ${errors}`);
  console.log("playground: all checks passed");
} finally {
  await browser.close();
}
