// A web page on another loopback origin calls the API from headless Chromium (playwright-core).
// Usage: node tests/browser/cors.mjs API_BASE API_KEY PAGE_PORT allowed|refused
// The page is served by this script on http://127.0.0.1:PAGE_PORT. "allowed": the server lists that origin in
// server.cors_origins, so the page reads voices, synthesises with a bearer key and reads the exposed headers.
// "refused": the server allows no origin, so the browser blocks every call. Exits non-zero on the first failure.
import { createRequire } from "node:module";
import { createServer } from "node:http";

const require = createRequire(`${process.env.NODE_PATH}/`);
const { chromium } = require("playwright-core");

const [api, key, pagePort, mode] = process.argv.slice(2);
function expect(condition, message) {
  if (!condition) throw new Error(`expectation failed: ${message}`);
}

const page = createServer((_, res) => {
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end("<!doctype html><title>clinic front desk</title><p>another origin</p>");
});
await new Promise((done) => page.listen(Number(pagePort), "127.0.0.1", done));
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking"],
});
try {
  const tab = await browser.newPage();
  const origin = `http://127.0.0.1:${pagePort}`;
  await tab.goto(`${origin}/`);
  const outcome = await tab.evaluate(async ([api, key]) => {
    const attempt = async (run) => {
      try { return await run(); } catch (e) { return { blocked: e.name }; }
    };
    const voices = await attempt(async () => {
      const r = await fetch(`${api}/v1/voices`, { headers: { "xi-api-key": key } });
      const body = await r.json();
      return { status: r.status, count: body.voices.length, requestId: r.headers.get("x-request-id"),
               remaining: r.headers.get("x-ratelimit-remaining") };
    });
    const speech = await attempt(async () => {
      const r = await fetch(`${api}/v1/text-to-speech/zuri`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ text: "Karibu kliniki yetu." }),
      });
      const body = await r.json();
      return { status: r.status, type: body.content_type, bytes: atob(body.audio_base64).length };
    });
    const refusal = await attempt(async () => {
      const r = await fetch(`${api}/v1/voices/no-such-voice`, { headers: { "xi-api-key": key } });
      return { status: r.status, type: r.headers.get("content-type"), detail: (await r.json()).detail };
    });
    return { voices, speech, refusal };
  }, [api, key]);
  const text = JSON.stringify(outcome);
  if (mode === "allowed") {
    expect(outcome.voices.status === 200 && outcome.voices.count >= 2, `voices: ${text}`);
    expect(outcome.voices.requestId && outcome.voices.remaining, `exposed headers: ${text}`);
    expect(outcome.speech.status === 200 && outcome.speech.type === "audio/wav" && outcome.speech.bytes > 1000,
      `speech with a bearer key: ${text}`);
    expect(outcome.refusal.status === 404 && outcome.refusal.type.startsWith("application/problem+json")
      && outcome.refusal.detail, `a refusal is readable: ${text}`);
  } else {
    for (const name of ["voices", "speech", "refusal"]) {
      expect(outcome[name].blocked === "TypeError", `${name} blocked: ${text}`);
    }
  }
  console.log(`all checks passed (${mode}): ${text}`);
} finally {
  await browser.close();
  page.close();
}
