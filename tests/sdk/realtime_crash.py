"""A realtime session that crashes (fault injection: every 4th client message panics its actor) ends with a
close frame of its own, and a session opened after it converses normally.

    python3 realtime_crash.py BASE_URL KEY
"""

import asyncio
import json
import sys

import websockets

BASE, KEY = sys.argv[1:3]
URL = BASE.replace("http://", "ws://") + "/v1/voice-agent/realtime?scenario=general"
HEADERS = {"xi-api-key": KEY}


async def main():
    async with websockets.connect(URL, additional_headers=HEADERS) as doomed:
        await doomed.recv()
        async with websockets.connect(URL, additional_headers=HEADERS) as bystander:
            await bystander.recv()
            for _ in range(4):
                await doomed.send(json.dumps({"type": "user_activity"}))
            try:
                while True:
                    await asyncio.wait_for(doomed.recv(), 10)
            except websockets.ConnectionClosed as closed:
                assert closed.rcvd.code == 1011, closed
                print("crashed session closed:", closed.rcvd.code, closed.rcvd.reason)
            # The other session, open all along, still answers.
            await bystander.send(json.dumps({"type": "user_message", "text": "Habari za leo"}))
            seen = []
            while "audio" not in seen:
                message = json.loads(await asyncio.wait_for(bystander.recv(), 20))
                seen.append(message["type"])
            assert seen[:2] == ["user_transcript", "agent_response"], seen
            print("bystander answered:", seen)


asyncio.run(main())
