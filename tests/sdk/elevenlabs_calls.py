"""Drive sauti's /elevenlabs API with ElevenLabs' official Python SDK, unchanged, as its users would.

Usage: python3 elevenlabs_calls.py BASE_URL API_KEY OUT_DIR CLIP_A CLIP_B SPEECH_WAV
Writes the audio the SDK returns into OUT_DIR and a summary, OUT_DIR/results.json, for the Rust test to check.
Exits non-zero on the first unexpected exception.
"""
import json
import pathlib
import sys

from elevenlabs import VoiceSettings
from elevenlabs.client import ElevenLabs
from elevenlabs.core.api_error import ApiError

base, key, out, clip_a, clip_b, speech = sys.argv[1:7]
out = pathlib.Path(out)
out.mkdir(parents=True, exist_ok=True)
client = ElevenLabs(api_key=key, base_url=f"{base}/elevenlabs")
results = {}

results["voices"] = [v.voice_id for v in client.voices.get_all().voices]
pages, token = [], None
while True:
    page = client.voices.search(page_size=1, next_page_token=token)
    pages.append({"ids": [v.voice_id for v in page.voices], "has_more": page.has_more,
                  "total_count": page.total_count})
    if not page.has_more:
        break
    token = page.next_page_token
results["pages"] = pages
zuri = client.voices.get("zuri")
results["zuri"] = {"name": zuri.name, "category": zuri.category, "labels": zuri.labels}
results["models"] = [m.model_id for m in client.models.list()]

text = "Karibu kliniki ya Amani. Daktari wako atakuona saa tatu na nusu asubuhi."
for fmt in ["mp3_44100_128", "mp3_22050_32", "pcm_16000", "ulaw_8000", "opus_48000_64", "wav_22050"]:
    audio = client.text_to_speech.convert(
        "zuri", text=text, model_id="eleven_multilingual_v2", output_format=fmt,
        voice_settings=VoiceSettings(stability=0.4, similarity_boost=0.8, speed=1.0))
    (out / f"convert.{fmt}").write_bytes(b"".join(audio))
(out / "default.mp3").write_bytes(b"".join(client.text_to_speech.convert("zuri", text=text)))
(out / "slow.pcm").write_bytes(b"".join(client.text_to_speech.convert(
    "zuri", text=text, output_format="pcm_16000", voice_settings=VoiceSettings(speed=0.5))))
(out / "stream.mp3").write_bytes(b"".join(client.text_to_speech.stream(
    "zuri", text=text, model_id="eleven_flash_v2_5", output_format="mp3_44100_128")))


def refusal(call):
    try:
        call()
    except ApiError as e:
        return {"class": type(e).__name__, "status": e.status_code, "body": e.body}
    raise AssertionError("the call was not refused")


results["unknown_voice"] = refusal(lambda: b"".join(client.text_to_speech.convert("alloy", text=text)))
timed_text = "Salio lako ni TSh 12,500. Asante kwa kutumia huduma yetu!"
timed = client.text_to_speech.convert_with_timestamps("baraka", text=timed_text, output_format="wav_16000")
(out / "timed.wav").write_bytes(__import__("base64").b64decode(timed.audio_base_64))


def alignment(a):
    return {"characters": a.characters, "starts": a.character_start_times_seconds,
            "ends": a.character_end_times_seconds}


results["timed"] = {"text": timed_text, "alignment": alignment(timed.alignment),
                    "normalized": alignment(timed.normalized_alignment)}
chunks = list(client.text_to_speech.stream_with_timestamps("baraka", text=timed_text, output_format="pcm_16000"))
(out / "timed_stream.pcm").write_bytes(b"".join(__import__("base64").b64decode(c.audio_base_64) for c in chunks))
results["timed_stream"] = [alignment(c.alignment) for c in chunks if c.alignment]
results["unknown_format"] = refusal(
    lambda: b"".join(client.text_to_speech.convert("zuri", text=text, output_format="mp3_48000_320")))

with open(clip_a, "rb") as a, open(clip_b, "rb") as b:
    added = client.voices.ivc.create(name="Mwalimu Juma", files=[a, b],
                                     description="Juma agreed to this clone on 2026-11-20, in writing.")
results["added"] = {"voice_id": added.voice_id, "requires_verification": added.requires_verification}
(out / "cloned.wav").write_bytes(b"".join(client.text_to_speech.convert(
    added.voice_id, text=text, output_format="wav_16000")))
cloned_timed = client.text_to_speech.convert_with_timestamps(added.voice_id, text=text, output_format="pcm_16000")
results["cloned_timed"] = {"characters": "".join(cloned_timed.alignment.characters),
                           "last_end": cloned_timed.alignment.character_end_times_seconds[-1]}
cloned = client.voices.get(added.voice_id)
results["cloned"] = {"name": cloned.name, "category": cloned.category}
results["personal"] = [v.voice_id for v in client.voices.search(voice_type="personal").voices]
results["deleted"] = client.voices.delete(added.voice_id).status
results["gone"] = refusal(lambda: client.voices.get(added.voice_id))

with open(speech, "rb") as audio:
    transcript = client.speech_to_text.convert(file=audio, model_id="scribe_v1", language_code="swa")
results["transcript"] = {
    "text": transcript.text, "language_code": transcript.language_code,
    "language_probability": transcript.language_probability,
    "words": [{"text": w.text, "type": w.type, "start": w.start, "end": w.end} for w in transcript.words],
}
with open(speech, "rb") as audio:
    english = client.speech_to_text.convert(file=audio, model_id="scribe_v2", language_code="en")
results["english"] = {"text": english.text, "language_code": english.language_code,
                      "words": [{"text": w.text, "type": w.type, "start": w.start, "end": w.end}
                                for w in english.words or []]}
with open(speech, "rb") as audio:
    french = client.speech_to_text.convert(file=audio, model_id="scribe_v1", language_code="fra")
results["french"] = {"text": french.text,
                     "words": [{"text": w.text, "type": w.type, "start": w.start, "end": w.end}
                               for w in french.words or []]}
with open(speech, "rb") as audio:
    hinted = client.speech_to_text.convert(file=audio, model_id="scribe_v1", language_code="swa",
                                           keyterms=["M-Pesa", "Kariakoo", "benki ya wananchi"])
results["hinted"] = {"text": hinted.text, "words": len(hinted.words or [])}
with open(speech, "rb") as audio:
    results["bad_keyterm"] = refusal(lambda: client.speech_to_text.convert(
        file=audio, model_id="scribe_v1", keyterms=["maneno sita ndani ya neno moja hili"]))
with open(speech, "rb") as audio:
    results["bad_model"] = refusal(lambda: client.speech_to_text.convert(file=audio, model_id="whisper-1"))

subscription = client.user.subscription.get()
results["subscription"] = {
    "tier": subscription.tier, "character_count": subscription.character_count,
    "character_limit": subscription.character_limit,
    "next_character_count_reset_unix": subscription.next_character_count_reset_unix,
}

(out / "results.json").write_text(json.dumps(results, ensure_ascii=False, indent=1))
print("all calls made")
