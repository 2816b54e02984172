"""The openai SDK's realtime client (pinned in tools/pypi.sh sdks), unchanged, pointed at sauti by its base URL: a
transcription session that streams Swahili speech in as 24 kHz PCM and commits it (its transcript must equal the
HTTP transcription of the same audio), one where the server's voice-activity detection ends the turn, one in
G.711 μ-law, and refusals the SDK reads as error events.

Usage: python3 openai_realtime.py BASE_URL API_KEY OUT_DIR

Writes OUT_DIR/realtime.json.
"""

import asyncio
import base64
import io
import json
import os
import sys
import urllib.request
import wave

from openai import AsyncOpenAI

BASE, KEY, OUT = sys.argv[1:4]
TEXT = "Habari za asubuhi. Nataka kujua salio la akaunti yangu ya akiba, tafadhali."


def synthesise(fmt):
    request = urllib.request.Request(
        BASE.replace("/v1", "/elevenlabs/v1") + f"/text-to-speech/zuri?output_format={fmt}",
        data=json.dumps({"text": TEXT}).encode(),
        headers={"xi-api-key": KEY, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request) as answer:
        return answer.read()


def chunks(audio, size):
    return [audio[i : i + size] for i in range(0, len(audio), size)]


async def session(client, update, audio, chunk, commit, pace=0.0):
    """Events of one session, until a transcript is completed (or failed); each chunk sent `pace` seconds
    after the one before (as a microphone sends it), or at once."""
    events = []
    async with client.realtime.connect(extra_query={"intent": "transcription"}) as connection:
        await connection.session.update(session=update)
        for piece in chunks(audio, chunk):
            await connection.input_audio_buffer.append(audio=base64.b64encode(piece).decode())
            await asyncio.sleep(pace)
        if commit:
            await connection.input_audio_buffer.commit()
        async for event in connection:
            record = {"type": event.type}
            for name in ("delta", "transcript", "item_id", "audio_start_ms", "audio_end_ms"):
                if getattr(event, name, None) is not None:
                    record[name] = getattr(event, name)
            if event.type == "error":
                record["code"] = event.error.code
            events.append(record)
            if event.type.startswith("conversation.item.input_audio_transcription.") and not event.type.endswith("delta"):
                break
    return events


async def refusals(client):
    """A session update the server cannot honour and an empty commit: error events, the session goes on."""
    async with client.realtime.connect(extra_query={"intent": "transcription"}) as connection:
        await connection.session.update(session={"type": "transcription", "audio": {"input": {
            "format": {"type": "audio/pcm", "rate": 24000},
            "transcription": {"model": "gpt-4o-transcribe", "language": "xx"}}}})
        await connection.input_audio_buffer.commit()
        codes = []
        async for event in connection:
            if event.type == "error":
                codes.append(event.error.code)
            if len(codes) == 2:
                break
    return codes


def update(fmt, detection):
    return {"type": "transcription", "audio": {"input": {
        "format": fmt,
        "transcription": {"model": "gpt-4o-transcribe", "language": "sw"},
        "turn_detection": detection}}}


async def main():
    client = AsyncOpenAI(api_key=KEY, base_url=BASE)
    wav = synthesise("wav_24000")
    with wave.open(io.BytesIO(wav)) as reader:
        assert reader.getframerate() == 24000
        pcm = reader.readframes(reader.getnframes())
    http = await client.audio.transcriptions.create(
        model="gpt-4o-transcribe", file=("speech.wav", wav, "audio/wav"), language="sw")
    results = {"http": http.text}
    pcm24 = {"type": "audio/pcm", "rate": 24000}
    # The client commits: exactly the audio the HTTP path heard.
    results["committed"] = await session(client, update(pcm24, None), pcm, 4800, True)
    # The server hears the turn end: speech, then 1.5 s of silence, in 100 ms appends sent in real time.
    silence = bytes(2 * 36000)
    vad = {"type": "server_vad", "silence_duration_ms": 500}
    results["vad"] = await session(client, update(pcm24, vad), pcm + silence, 4800, False, pace=0.1)
    # Telephone audio.
    ulaw = synthesise("ulaw_8000")
    results["ulaw"] = await session(client, update({"type": "audio/pcmu"}, None), ulaw, 800, True)
    results["refusals"] = await refusals(client)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "realtime.json"), "w") as f:
        json.dump(results, f, ensure_ascii=False)


asyncio.run(main())
