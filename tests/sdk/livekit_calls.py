"""LiveKit Agents' ElevenLabs plugin (livekit-plugins-elevenlabs, pinned in tools/pypi.sh frameworks), unchanged, pointed
at sauti by its base URL: streams of text pushed word by word and spoken over one multi-context socket, in the
plugin's default encoding (MP3) and in PCM; and a barge-in: a long reply is interrupted (its stream closed, which
closes its context) while the next reply is already speaking, and the next reply must still arrive whole.

Usage: python3 livekit_calls.py HTTP_BASE_URL API_KEY VOICE_ID OUT_DIR

Writes OUT_DIR/livekit.json.
"""

import asyncio
import json
import os
import sys

import aiohttp
from livekit.agents import APIConnectOptions
from livekit.agents.tts.tts import USERDATA_TIMED_TRANSCRIPT
from livekit.plugins import elevenlabs

BASE, KEY, VOICE, OUT = sys.argv[1:5]

FIRST = "Karibu kwenye huduma ya wateja wa benki. Akaunti yako iko salama na salio lako ni shilingi elfu tano."
SECOND = "Samahani, nimekuelewa. Nitakuunganisha na mhudumu sasa hivi, tafadhali subiri kidogo."
LONG = " ".join(
    [
        "Ratiba ya kliniki ni kama ifuatavyo.",
        "Jumatatu na Jumanne tunawaona watoto wadogo kuanzia saa mbili asubuhi hadi saa sita mchana.",
        "Jumatano ni siku ya wajawazito, na Alhamisi ni siku ya wagonjwa wa kisukari na shinikizo la damu.",
        "Ijumaa tunatoa chanjo kwa wote, na Jumamosi kliniki hufungwa mapema saa nane mchana.",
    ]
)


def push_words(stream, text):
    for i, word in enumerate(text.split(" ")):
        stream.push_text(word if i == 0 else " " + word)


async def collect(stream, first_audio=None):
    """Seconds of audio, the timed words, and the sample rate of what the stream gives."""
    samples, rate, words = 0, 0, []
    async for event in stream:
        frame = event.frame
        samples += frame.samples_per_channel
        rate = frame.sample_rate
        for timed in frame.userdata.get(USERDATA_TIMED_TRANSCRIPT) or []:
            words.append([str(timed), float(timed.start_time), float(timed.end_time)])
        if first_audio is not None and not first_audio.is_set():
            first_audio.set()
    return {"seconds": samples / rate if rate else 0.0, "rate": rate, "words": words}


async def speak(tts, text):
    stream = tts.stream(conn_options=APIConnectOptions(max_retry=0, timeout=30))
    push_words(stream, text)
    stream.flush()
    stream.end_input()
    async with stream:
        return await collect(stream)


async def barge_in(tts):
    """LONG starts; once it speaks, SECOND starts; once SECOND speaks, LONG is closed mid-speech."""
    long_stream = tts.stream(conn_options=APIConnectOptions(max_retry=0, timeout=30))
    push_words(long_stream, LONG)
    long_stream.flush()
    long_stream.end_input()
    long_speaking = asyncio.Event()
    long_task = asyncio.create_task(collect(long_stream, long_speaking))
    await asyncio.wait_for(long_speaking.wait(), timeout=30)

    next_stream = tts.stream(conn_options=APIConnectOptions(max_retry=0, timeout=30))
    push_words(next_stream, SECOND)
    next_stream.flush()
    next_stream.end_input()
    next_speaking = asyncio.Event()
    next_task = asyncio.create_task(collect(next_stream, next_speaking))
    await asyncio.wait_for(next_speaking.wait(), timeout=30)

    # The caller talks over the long reply: the agent closes its stream (and so its context).
    await long_stream.aclose()
    long_task.cancel()
    long_partial = None
    try:
        long_partial = await long_task
    except (asyncio.CancelledError, Exception):
        pass
    following = await asyncio.wait_for(next_task, timeout=60)
    await next_stream.aclose()
    return {"next": following, "interrupted_completed": long_partial is not None}


async def main():
    results = {}
    async with aiohttp.ClientSession() as session:
        mp3 = elevenlabs.TTS(api_key=KEY, voice_id=VOICE, base_url=BASE, http_session=session)
        results["mp3"] = await speak(mp3, FIRST)
        pcm = elevenlabs.TTS(
            api_key=KEY, voice_id=VOICE, base_url=BASE, http_session=session, encoding="pcm_16000"
        )
        results["pcm"] = await speak(pcm, FIRST)
        results["barge_in"] = await barge_in(pcm)
        # The socket and the plugin still serve the next turn.
        results["after"] = await speak(pcm, SECOND)
        await mp3.aclose()
        await pcm.aclose()
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "livekit.json"), "w") as f:
        json.dump(results, f)


asyncio.run(main())
