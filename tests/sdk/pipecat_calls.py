"""Pipecat's ElevenLabsTTSService (pipecat-ai, pinned in tools/pypi.sh frameworks), unchanged, pointed at sauti by its
base URL: a pipeline streams a reply in word by word, as a language model writes it, and the service speaks it
over the multi-context socket. Then a second reply, on the same socket.

Usage: python3 pipecat_calls.py WS_BASE_URL API_KEY VOICE_ID OUT_DIR

Writes OUT_DIR/pipecat.json: for each reply, the seconds of 16 kHz audio received, the word timestamps the
service computed from the alignment, and any errors the pipeline saw.
"""

import asyncio
import json
import os
import sys

from pipecat.frames.frames import (
    EndFrame,
    ErrorFrame,
    LLMFullResponseEndFrame,
    LLMFullResponseStartFrame,
    LLMTextFrame,
    TTSAudioRawFrame,
    TTSStoppedFrame,
)
from pipecat.pipeline.pipeline import Pipeline
from pipecat.pipeline.runner import PipelineRunner
from pipecat.pipeline.task import PipelineParams, PipelineTask
from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
from pipecat.services.elevenlabs.tts import ElevenLabsTTSService

BASE, KEY, VOICE, OUT = sys.argv[1:5]
RATE = 16000

REPLIES = [
    "Habari yako! Salio la akaunti yako ni shilingi elfu kumi na mbili. "
    "Je, ungependa kutuma pesa kwa M-Pesa leo, au kulipa bili ya umeme?",
    "Sawa kabisa. Nitakutumia ujumbe mfupi wenye nambari ya kumbukumbu baada ya dakika tano.",
]


class Recording(ElevenLabsTTSService):
    """The service as shipped, also keeping the word timestamps it computes."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.words = []

    async def add_word_timestamps(self, word_times, context_id=None, **kwargs):
        self.words.extend([word, float(at)] for word, at in word_times)
        await super().add_word_timestamps(word_times, context_id, **kwargs)


class Collect(FrameProcessor):
    def __init__(self):
        super().__init__()
        self.audio = bytearray()
        self.errors = []
        self.stopped = asyncio.Event()

    async def process_frame(self, frame, direction: FrameDirection):
        await super().process_frame(frame, direction)
        if isinstance(frame, TTSAudioRawFrame):
            self.audio += frame.audio
        elif isinstance(frame, ErrorFrame):
            self.errors.append(str(frame.error))
        elif isinstance(frame, TTSStoppedFrame):
            self.stopped.set()
        await self.push_frame(frame, direction)


async def main():
    tts = Recording(api_key=KEY, voice_id=VOICE, url=BASE, sample_rate=RATE)
    collect = Collect()
    task = PipelineTask(
        Pipeline([tts, collect]),
        params=PipelineParams(audio_out_sample_rate=RATE),
    )
    runner = asyncio.create_task(PipelineRunner(handle_sigint=False).run(task))
    results = []
    for reply in REPLIES:
        collect.audio.clear()
        collect.stopped.clear()
        tts.words = []
        # The words as a model streams them: each but the first with its leading space.
        frames = [LLMFullResponseStartFrame()] + [
            LLMTextFrame(word if i == 0 else " " + word) for i, word in enumerate(reply.split(" "))
        ]
        frames.append(LLMFullResponseEndFrame())
        await task.queue_frames(frames)
        await asyncio.wait_for(collect.stopped.wait(), timeout=60)
        # Let the last frames of the reply through.
        await asyncio.sleep(0.5)
        results.append(
            {
                "text": reply,
                "seconds": len(collect.audio) / 2 / RATE,
                "words": list(tts.words),
                "errors": list(collect.errors),
            }
        )
    await task.queue_frame(EndFrame())
    await asyncio.wait_for(runner, timeout=30)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "pipecat.json"), "w") as f:
        json.dump(results, f)


asyncio.run(main())
