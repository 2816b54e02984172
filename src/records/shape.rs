//! A call record in ElevenLabs' Conversational AI shapes: what `GET /v1/convai/conversations/{id}` answers and a
//! `post_call_transcription` webhook carries.

use serde_json::{json, Value};

use super::{CallRecord, Channel, Speaker};

/// `in-progress` or `done`.
pub fn status(record: &CallRecord) -> String {
    match record.ended_unix.is_some() || record.channel == Channel::Http {
        true => "done",
        false => "in-progress",
    }
    .into()
}

/// A sentence on what happened in the call.
pub fn summary_of(record: &CallRecord) -> String {
    let mut intents: Vec<&str> = Vec::new();
    for intent in record.turns.iter().filter_map(|t| t.intent.as_deref()) {
        if !intents.contains(&intent) {
            intents.push(intent);
        }
    }
    let mut summary = format!(
        "{} turns in scenario {}; intents: {}.",
        record.turns.len(),
        record.scenario,
        match intents.is_empty() {
            true => "none".to_string(),
            false => intents.join(", "),
        }
    );
    for transfer in &record.transfers {
        let done = if transfer.ok {
            "transferred"
        } else {
            "transfer failed"
        };
        summary.push_str(&format!(" {done} to {}.", transfer.to));
    }
    if let Some(reason) = &record.end_reason {
        summary.push_str(&format!(" Ended: {reason}."));
    }
    summary
}

/// One conversation, whole, in ElevenLabs' shape.
pub fn conversation(record: &CallRecord) -> Value {
    let transcript: Vec<Value> = record
        .turns
        .iter()
        .map(|turn| {
            json!({
                "role": match turn.role { Speaker::User => "user", Speaker::Agent => "agent" },
                "message": turn.text,
                "time_in_call_secs": turn.at_secs.floor() as i64,
                "interrupted": turn.interrupted,
                "tool_calls": [],
                "tool_results": [],
            })
        })
        .collect();
    let phone_call = (record.channel == Channel::Twilio).then(|| {
        json!({
            "type": "twilio",
            "direction": "inbound",
            "phone_number_id": "",
            "agent_number": "",
            "external_number": record.caller.clone().unwrap_or_default(),
            "stream_sid": "",
            "call_sid": record.call_sid.clone().unwrap_or_default(),
        })
    });
    json!({
        "agent_id": record.scenario,
        "agent_name": record.scenario,
        "conversation_id": record.id,
        "status": status(record),
        "transcript": transcript,
        "metadata": {
            "start_time_unix_secs": record.started_unix,
            "call_duration_secs": record.duration_secs.round() as i64,
            "termination_reason": record.end_reason,
            "phone_call": phone_call,
        },
        "analysis": {
            "call_successful": record.outcome,
            "transcript_summary": summary_of(record),
        },
        "has_audio": record.audio,
        "has_user_audio": record.audio,
        "has_response_audio": record.audio,
        "has_auxiliary_audio": false,
        "record": record,
    })
}
