"""Read sauti's call records with ElevenLabs' official Python SDK, unchanged: conversational_ai.conversations
list (with its filters and cursor), get, audio and delete, as a call centre's CRM would.

Usage: python3 elevenlabs_conversations.py BASE_URL API_KEY OTHER_KEY OUT_DIR DELETE_ID
Writes OUT_DIR/results.json (and each recording as OUT_DIR/CONVERSATION_ID.wav) for the Rust test to check; deletes
DELETE_ID last. Exits non-zero on the first unexpected exception.
"""
import json
import pathlib
import sys

from elevenlabs.client import ElevenLabs
from elevenlabs.core.api_error import ApiError

base, key, other_key, out, delete_id = sys.argv[1:6]
out = pathlib.Path(out)
out.mkdir(parents=True, exist_ok=True)
calls = ElevenLabs(api_key=key, base_url=f"{base}/elevenlabs").conversational_ai.conversations
other = ElevenLabs(api_key=other_key, base_url=f"{base}/elevenlabs").conversational_ai.conversations
results = {}


def summary(c):
    return {"id": c.conversation_id, "agent_id": c.agent_id, "status": c.status,
            "call_successful": c.call_successful, "message_count": c.message_count,
            "start": c.start_time_unix_secs, "duration": c.call_duration_secs}


everything = calls.list(page_size=100)
results["all"] = [summary(c) for c in everything.conversations]
results["all_has_more"] = everything.has_more

pages, cursor = [], None
while True:
    page = calls.list(page_size=1, cursor=cursor)
    pages.append([c.conversation_id for c in page.conversations])
    if not page.has_more:
        break
    cursor = page.next_cursor
results["pages"] = pages

results["banking"] = [c.conversation_id for c in calls.list(agent_id="banking").conversations]
results["success"] = [c.conversation_id for c in calls.list(call_successful="success").conversations]
results["search"] = [c.conversation_id for c in calls.list(search="SALIO").conversations]
first = min(c.start_time_unix_secs for c in everything.conversations)
results["after_first"] = [c.conversation_id for c in
                          calls.list(call_start_after_unix=first + 100_000).conversations]

results["conversations"] = {}
for c in everything.conversations:
    whole = calls.get(c.conversation_id)
    entry = {
        "transcript": [{"role": t.role, "message": t.message, "time": t.time_in_call_secs}
                       for t in whole.transcript],
        "status": whole.status,
        "termination_reason": whole.metadata.termination_reason,
        "duration": whole.metadata.call_duration_secs,
        "call_successful": whole.analysis.call_successful,
        "summary": whole.analysis.transcript_summary,
        "has_audio": whole.has_audio,
    }
    if whole.has_audio:
        audio = b"".join(calls.audio.get(c.conversation_id))
        (out / f"{c.conversation_id}.wav").write_bytes(audio)
        entry["audio_bytes"] = len(audio)
    results["conversations"][c.conversation_id] = entry


def status_of(call):
    try:
        call()
        return 200
    except ApiError as error:
        return error.status_code


results["other_key_get"] = status_of(lambda: other.get(delete_id))
results["other_key_delete"] = status_of(lambda: other.delete(delete_id))
results["other_key_list"] = [c.conversation_id for c in other.list().conversations]
results["delete"] = status_of(lambda: calls.delete(delete_id))
results["get_after_delete"] = status_of(lambda: calls.get(delete_id))
results["delete_again"] = status_of(lambda: calls.delete(delete_id))

(out / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False))
