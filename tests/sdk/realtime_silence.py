"""A caller who says nothing, and a call that runs too long, through the `websockets` client library.

    python3 realtime_silence.py BASE_URL KEY OUT_JSON

The server's scenarios folder sets `general` to re-prompt after 1 s of silence, once, and `health` to close a call
after 4 s. What each call saw is written to OUT_JSON for the Rust test to assert on.
"""

import asyncio
import json
import sys
import time

import websockets

BASE, KEY, OUT = sys.argv[1:4]
WS = BASE.replace("http://", "ws://")
HEADERS = {"xi-api-key": KEY}


async def call(scenario, first=None):
    url = f"{WS}/v1/voice-agent/realtime?scenario={scenario}&output_format=pcm_16000"
    seen = []
    started = time.monotonic()
    async with websockets.connect(url, additional_headers=HEADERS) as ws:
        await ws.recv()
        if first:
            await ws.send(json.dumps({"type": "user_message", "text": first}))
        try:
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if message["type"] == "ping":
                    continue
                entry = {"type": message["type"], "at": round(time.monotonic() - started, 2)}
                if message["type"] == "agent_response":
                    entry["text"] = message["agent_response_event"]["agent_response"]
                if message["type"] == "end_call":
                    entry["reason"] = message["end_call_event"]["reason"]
                if message["type"] != "audio" or not seen or seen[-1]["type"] != "audio":
                    seen.append(entry)
        except websockets.ConnectionClosed as closed:
            return {"events": seen, "close": [closed.rcvd.code, closed.rcvd.reason],
                    "seconds": round(time.monotonic() - started, 2)}


async def main():
    results = {
        "silent": await call("general"),
        "long": await call("health", first="Habari za asubuhi"),
    }
    with open(OUT, "w") as out:
        json.dump(results, out, indent=1)


asyncio.run(main())
