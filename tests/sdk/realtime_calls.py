"""Drive sauti's realtime voice agent with the `websockets` client library, as a voice-agent builder would.

    python3 realtime_calls.py BASE_URL KEY SPEECH_WAV SPEECH_ULAW OUT_JSON MURMUR_WAV...

SPEECH_WAV is a 16 kHz mono 16-bit WAV of someone speaking, SPEECH_ULAW the same words as raw μ-law at
8 kHz, and each MURMUR_WAV a listener's short "eeh" or "sawa" in the same WAV format. Each check below raises on a failure; what was seen is written to OUT_JSON for the Rust test to
assert on as well.
"""

import asyncio
import base64
import json
import sys
import time
import urllib.error
import urllib.request
import wave

import websockets

BASE, KEY, SPEECH, SPEECH_ULAW, OUT = sys.argv[1:6]
MURMURS = sys.argv[6:]
WS = BASE.replace("http://", "ws://")
HEADERS = {"xi-api-key": KEY}
results = {}

def pcm_of(path):
    with wave.open(path) as w:
        assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
        return w.readframes(w.getnframes())


PCM = pcm_of(SPEECH)
SILENCE = b"\0" * 32000  # one second


def chunk(pcm):
    return json.dumps({"user_audio_chunk": base64.b64encode(pcm).decode()})


async def speak(ws, pcm, real_time=False):
    """Send speech in 100 ms chunks (paced like a microphone when asked), then a second of silence."""
    for at in range(0, len(pcm), 3200):
        await ws.send(chunk(pcm[at:at + 3200]))
        if real_time:
            await asyncio.sleep(0.1)
    for at in range(0, len(SILENCE), 3200):
        await ws.send(chunk(SILENCE[at:at + 3200]))
        if real_time:
            await asyncio.sleep(0.1)


async def events(ws, until_quiet=1.5):
    """Messages until the socket is quiet for `until_quiet` seconds (pings left out)."""
    seen = []
    try:
        while True:
            message = json.loads(await asyncio.wait_for(ws.recv(), until_quiet))
            if message["type"] != "ping":
                seen.append(message)
    except asyncio.TimeoutError:
        return seen


def kinds(seen):
    return [m["type"] for m in seen]


async def spoken_turn():
    url = f"{WS}/v1/voice-agent/realtime?scenario=banking&voice_id=zuri&end_of_turn_ms=400"
    async with websockets.connect(url, additional_headers=HEADERS) as ws:
        hello = json.loads(await ws.recv())
        assert hello["type"] == "conversation_initiation_metadata", hello
        meta = hello["conversation_initiation_metadata_event"]
        assert meta["agent_output_audio_format"] == "pcm_16000", meta
        await speak(ws, PCM)
        seen = await events(ws)
        order = kinds(seen)
        assert order[:3] == ["user_transcript", "agent_response", "audio"], order
        assert set(order[2:]) == {"audio"}, order
        audio = b"".join(base64.b64decode(m["audio_event"]["audio_base_64"]) for m in seen[2:])
        ids = [m["audio_event"]["event_id"] for m in seen[2:]]
        assert ids == sorted(ids) and len(set(ids)) == len(ids), ids
        results["spoken"] = {
            "transcript": seen[0]["user_transcription_event"]["user_transcript"],
            "reply": seen[1]["agent_response_event"]["agent_response"],
            "session_id": seen[1]["agent_response_event"]["session_id"],
            "audio_seconds": len(audio) / 32000,
            "pieces": len(ids),
        }


async def typed_turn_and_barge_in():
    url = f"{WS}/v1/voice-agent/realtime?scenario=health&output_format=pcm_16000"
    async with websockets.connect(url, additional_headers=HEADERS) as ws:
        await ws.recv()
        await ws.send(json.dumps({"type": "user_message", "text": "Nataka kupanga miadi na daktari kesho asubuhi"}))
        seen = []
        while not any(m["type"] == "audio" for m in seen):
            seen.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
        # A typed turn is echoed as the caller's words, like a spoken one.
        assert kinds(seen)[:3] == ["user_transcript", "agent_response", "audio"], kinds(seen)
        assert seen[0]["user_transcription_event"]["user_transcript"].startswith("Nataka kupanga")
        reply = seen[1]["agent_response_event"]["agent_response"]
        # A second into the reply, the caller talks over it, as a person would, in real time.
        await asyncio.sleep(1.2)
        started = time.monotonic()
        talking = asyncio.ensure_future(speak(ws, PCM, real_time=True))
        after = []
        while not any(m["type"] == "agent_response_correction" for m in after):
            after.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
        interrupted = time.monotonic() - started
        order = kinds(after)
        assert "interruption" in order, order
        cut = after[order.index("interruption")]["interruption_event"]["event_id"]
        late = [m for m in after[order.index("interruption"):]
                if m["type"] == "audio" and m["audio_event"]["event_id"] <= cut]
        assert not late, "audio of the interrupted reply came after the interruption"
        correction = after[-1]["agent_response_correction_event"]
        assert correction["original_agent_response"] == reply, correction
        assert reply.startswith(correction["corrected_agent_response"]), correction
        await talking
        # The words spoken over the reply are the next turn.
        rest = await events(ws)
        assert kinds(rest)[:2] == ["user_transcript", "agent_response"], kinds(rest)
        results["barge_in"] = {"reply": reply, "heard": correction["corrected_agent_response"],
                               "seconds_to_interruption": interrupted}


async def murmurs_over_a_reply():
    """A listener's "eeh" and "sawa" while the agent speaks: the reply goes on, nothing is interrupted."""
    url = f"{WS}/v1/voice-agent/realtime?scenario=health&output_format=pcm_16000"
    seen = {}
    for path in MURMURS:
        async with websockets.connect(url, additional_headers=HEADERS) as ws:
            await ws.recv()
            await ws.send(json.dumps({"type": "user_message", "text": "Dalili za malaria ni zipi?"}))
            before = []
            while not any(m["type"] == "audio" for m in before):
                before.append(json.loads(await asyncio.wait_for(ws.recv(), 20)))
            await asyncio.sleep(1.0)
            talking = asyncio.ensure_future(speak(ws, pcm_of(path), real_time=True))
            after = await events(ws, until_quiet=2.5)
            await talking
            after += await events(ws, until_quiet=1.5)
            order = kinds(after)
            seen[path.rsplit("/", 1)[-1]] = {
                "murmur_seconds": len(pcm_of(path)) / 32000,
                "interruptions": order.count("interruption"),
                "transcripts": order.count("user_transcript"),
                "audio_after": order.count("audio"),
                "order": order[:12],
            }
    results["murmurs"] = seen


async def close_code(url, send):
    async with websockets.connect(url, additional_headers=HEADERS) as ws:
        await ws.recv()
        await ws.send(send)
        try:
            while True:
                await asyncio.wait_for(ws.recv(), 10)
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code, closed.rcvd.reason


async def refusals():
    url = f"{WS}/v1/voice-agent/realtime"
    seen = {}
    seen["malformed"] = await close_code(url, "{not json")
    seen["binary"] = await close_code(url, b"\x00\x01\x02")
    seen["unknown_type"] = await close_code(url, json.dumps({"type": "order_pizza"}))
    seen["bad_audio"] = await close_code(url, json.dumps({"user_audio_chunk": "***"}))
    for name, headers in [("wrong_key", {"xi-api-key": "not-a-key"}), ("no_key", {})]:
        try:
            async with websockets.connect(url, additional_headers=headers):
                raise AssertionError(f"{name}: the socket opened")
        except websockets.InvalidStatus as refused:
            seen[name] = refused.response.status_code
    try:
        async with websockets.connect(url + "?scenario=pizzeria", additional_headers=HEADERS):
            raise AssertionError("an unknown scenario opened a socket")
    except websockets.InvalidStatus as refused:
        seen["unknown_scenario"] = refused.response.status_code
        seen["unknown_scenario_body"] = json.loads(refused.response.body)
    results["refusals"] = seen


def mint():
    request = urllib.request.Request(f"{BASE}/v1/voice-agent/sessions", method="POST", headers=HEADERS)
    with urllib.request.urlopen(request) as answer:
        assert answer.status == 201
        return json.loads(answer.read())


async def tokens():
    minted = mint()
    url = f"{WS}{minted['url']}&scenario=general"
    async with websockets.connect(url) as ws:
        assert json.loads(await ws.recv())["type"] == "conversation_initiation_metadata"
        await ws.send(json.dumps({"type": "user_message", "text": "Habari yako"}))
        seen = await events(ws)
        assert kinds(seen)[:3] == ["user_transcript", "agent_response", "audio"], kinds(seen)
    seen = {}
    try:
        async with websockets.connect(url):
            raise AssertionError("a used token opened a second socket")
    except websockets.InvalidStatus as refused:
        seen["reused"] = [refused.response.status_code, json.loads(refused.response.body)["detail"]]
    stale = mint()
    await asyncio.sleep(stale["expires_in_seconds"] + 0.5)
    try:
        async with websockets.connect(f"{WS}{stale['url']}"):
            raise AssertionError("an expired token opened a socket")
    except websockets.InvalidStatus as refused:
        seen["expired"] = [refused.response.status_code, json.loads(refused.response.body)["detail"]]
    results["tokens"] = seen


async def stalled_and_healthy():
    """One client speaks and then never reads; another holds a whole conversation meanwhile."""
    url = f"{WS}/v1/voice-agent/realtime?scenario=general"
    stalled = await websockets.connect(url, additional_headers=HEADERS, max_queue=1)
    await speak(stalled, PCM)
    async with websockets.connect(url, additional_headers=HEADERS) as ws:
        await ws.recv()
        await speak(ws, PCM)
        seen = await events(ws)
        assert kinds(seen)[:3] == ["user_transcript", "agent_response", "audio"], kinds(seen)
    # The stalled session is ended by the server (idle), with a close frame once the client reads again.
    await asyncio.sleep(4)
    try:
        while True:
            await asyncio.wait_for(stalled.recv(), 10)
    except websockets.ConnectionClosed as closed:
        results["stalled"] = [closed.rcvd.code, closed.rcvd.reason]


async def phone_call():
    """A simulated Twilio Media Streams call: μ-law 8 kHz both ways, two turns, then the caller hangs up."""
    url = f"{WS}/v1/voice-agent/twilio?scenario=banking&end_of_turn_ms=400"
    with open(SPEECH_ULAW, "rb") as f:
        speech = f.read()
    quiet = b"\xff" * 8000  # a second of μ-law silence
    sid = "MZ00000000000000000000000000000001"
    turns = []
    async with websockets.connect(url, additional_headers=HEADERS) as ws:
        await ws.send(json.dumps({"event": "connected", "protocol": "Call", "version": "1.0.0"}))
        await ws.send(json.dumps({"event": "start", "sequenceNumber": "1", "streamSid": sid, "start": {
            "streamSid": sid, "callSid": "CA1", "accountSid": "AC1", "tracks": ["inbound"],
            "mediaFormat": {"encoding": "audio/x-mulaw", "sampleRate": 8000, "channels": 1},
            "customParameters": {}}}))
        for _turn in range(2):
            payload = speech + quiet
            for at in range(0, len(payload), 160):
                await ws.send(json.dumps({"event": "media", "streamSid": sid, "media": {
                    "track": "inbound", "payload": base64.b64encode(payload[at:at + 160]).decode()}}))
            received = []
            try:
                while True:
                    received.append(json.loads(await asyncio.wait_for(ws.recv(), 3)))
            except asyncio.TimeoutError:
                pass
            media = [m for m in received if m["event"] == "media"]
            marks = [m for m in received if m["event"] == "mark"]
            assert media and marks, [m["event"] for m in received]
            assert all(m["streamSid"] == sid for m in received)
            audio = b"".join(base64.b64decode(m["media"]["payload"]) for m in media)
            turns.append({"seconds": len(audio) / 8000, "marks": len(marks)})
        await ws.send(json.dumps({"event": "stop", "streamSid": sid, "stop": {"callSid": "CA1"}}))
        try:
            await asyncio.wait_for(ws.recv(), 5)
        except websockets.ConnectionClosed as closed:
            results["phone_close"] = [closed.rcvd.code, closed.rcvd.reason]
    results["phone"] = turns


def plain_get():
    request = urllib.request.Request(f"{BASE}/v1/voice-agent/realtime", headers=HEADERS)
    try:
        urllib.request.urlopen(request)
    except urllib.error.HTTPError as refused:
        results["plain_get"] = [refused.code, refused.headers["content-type"]]


async def main():
    await spoken_turn()
    await typed_turn_and_barge_in()
    await murmurs_over_a_reply()
    await refusals()
    await tokens()
    await stalled_and_healthy()
    await phone_call()
    plain_get()
    with open(OUT, "w") as out:
        json.dump(results, out, indent=1)


asyncio.run(main())
