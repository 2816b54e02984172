"""Drive sauti with OpenAI's official Python SDK, unchanged, as its users would.

Usage: python3 openai_calls.py BASE_URL API_KEY OUT_DIR SWAHILI_WAV ENGLISH_WAV
Writes the audio the SDK returns into OUT_DIR and a summary, OUT_DIR/results.json, for the Rust test to check
(decoding, durations, transcripts against sauti's own path). Exits non-zero on the first unexpected exception.
"""
import base64
import json
import pathlib
import sys

import openai

base, key, out, swahili, english = sys.argv[1:6]
out = pathlib.Path(out)
out.mkdir(parents=True, exist_ok=True)
client = openai.OpenAI(api_key=key, base_url=f"{base}/v1", max_retries=0)
results = {}

results["models"] = sorted(m.id for m in client.models.list())
results["model"] = client.models.retrieve("whisper-1").id

text = "Habari za mchana. Mkopo wako wa shilingi laki tano umeidhinishwa leo."
for fmt in ["mp3", "opus", "flac", "wav", "pcm"]:
    audio = client.audio.speech.create(model="tts-1", voice="zuri", input=text, response_format=fmt)
    (out / f"speech.{fmt}").write_bytes(audio.content)
# OpenAI's default format is mp3; voices may be named as objects; speed maps to the speaking rate.
(out / "default.mp3").write_bytes(
    client.audio.speech.create(model="gpt-4o-mini-tts", voice={"id": "baraka"}, input=text).content)
(out / "fast.wav").write_bytes(
    client.audio.speech.create(model="tts-1", voice="zuri", input=text, response_format="wav", speed=2.0).content)
with client.audio.speech.with_streaming_response.create(
        model="tts-1-hd", voice="zuri", input=text, response_format="opus") as streamed:
    (out / "streamed.opus").write_bytes(b"".join(streamed.iter_bytes(4096)))
# Server-sent events: each delta's audio joined is the whole PCM; the done event closes the stream.
with client.audio.speech.with_streaming_response.create(
        model="gpt-4o-mini-tts", voice="zuri", input=text, response_format="pcm", stream_format="sse") as events:
    deltas, kinds, done = [], [], None
    for line in events.iter_lines():
        if not line.startswith("data: "):
            continue
        event = json.loads(line[len("data: "):])
        kinds.append(event["type"])
        if event["type"] == "speech.audio.delta":
            deltas.append(base64.b64decode(event["audio"]))
        elif event["type"] == "speech.audio.done":
            done = event
    (out / "sse.pcm").write_bytes(b"".join(deltas))
    results["sse"] = {"content_type": events.headers["content-type"], "kinds": kinds, "done": done}


def refusal(call):
    try:
        call()
    except openai.APIStatusError as e:
        return {"class": type(e).__name__, "status": e.status_code, "message": str(e), "request_id": e.request_id}
    raise AssertionError("the call was not refused")


results["unknown_voice"] = refusal(
    lambda: client.audio.speech.create(model="tts-1", voice="alloy", input=text))
results["aac"] = refusal(
    lambda: client.audio.speech.create(model="tts-1", voice="zuri", input=text, response_format="aac"))
results["unknown_model"] = refusal(
    lambda: client.audio.speech.create(model="eleven_v3", voice="zuri", input=text))
results["wrong_key"] = refusal(
    lambda: openai.OpenAI(api_key="sk-wrong-0000000000", base_url=f"{base}/v1", max_retries=0).models.list())

transcripts = {}
for name, path, language in [("sw", swahili, "sw"), ("en", english, "en")]:
    with open(path, "rb") as audio:
        transcripts[f"{name}_json"] = client.audio.transcriptions.create(
            model="whisper-1", file=audio, language=language).text
    with open(path, "rb") as audio:
        transcripts[f"{name}_text"] = client.audio.transcriptions.create(
            model="whisper-1", file=audio, language=language, response_format="text")
    for captions in ["srt", "vtt"]:
        with open(path, "rb") as audio:
            transcripts[f"{name}_{captions}"] = client.audio.transcriptions.create(
                model="gpt-4o-transcribe", file=audio, language=language, response_format=captions)
    with open(path, "rb") as audio:
        verbose = client.audio.transcriptions.create(
            model="whisper-1", file=(pathlib.Path(path).name, audio), language=language,
            response_format="verbose_json", timestamp_granularities=["word", "segment"])
    transcripts[f"{name}_verbose"] = {
        "text": verbose.text, "language": verbose.language, "duration": verbose.duration,
        "words": [{"word": w.word, "start": w.start, "end": w.end} for w in (verbose.words or [])],
        "segments": [{"start": s.start, "end": s.end, "text": s.text} for s in (verbose.segments or [])],
    }
results["transcripts"] = transcripts
translations = {}
with open(swahili, "rb") as audio:
    translations["json"] = client.audio.translations.create(model="whisper-1", file=audio).text
with open(swahili, "rb") as audio:
    translations["text"] = client.audio.translations.create(model="whisper-1", file=audio, response_format="text")
with open(swahili, "rb") as audio:
    verbose = client.audio.translations.create(model="whisper-1", file=audio, response_format="verbose_json")
translations["verbose"] = {
    "text": verbose.text, "language": verbose.language, "duration": verbose.duration, "task": verbose.task,
    "segments": [{"start": s.start, "end": s.end, "text": s.text} for s in (verbose.segments or [])],
}
results["translations"] = translations
with open(swahili, "rb") as audio:
    results["bad_language"] = refusal(
        lambda: client.audio.transcriptions.create(model="whisper-1", file=audio, language="xx"))

(out / "results.json").write_text(json.dumps(results, ensure_ascii=False, indent=1))
print("all calls made")
