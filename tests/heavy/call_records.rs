//! Call records from outside: HTTP turns, a realtime socket and a Twilio call each leave a record that ElevenLabs'
//! official SDK lists (filtered, a page at a time), reads, downloads the recording of (records.recording on) and
//! deletes; another key sees none of them; a secret said or keyed is in none of them; and a call cut by `kill -9`
//! still leaves everything said before the cut.

use crate::common;

use std::time::{Duration, Instant};

use base64::Engine as _;
use common::call_socket::{closed, open, send, until, until_reply};
use common::fake_http::{Answer, FakeHttp};
use common::*;
use serde_json::{json, Value};

const PIN: &str = "4821";

fn env_of<'a>(asr: &'a str, twilio: &'a str, bank: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("SAUTI__ASR__MODEL", asr),
        ("SAUTI__RECORDS__RECORDING", "true"),
        ("SAUTI__ASR__MAX_NEW_TOKENS", "8"),
        ("SAUTI__TELEPHONY__TWILIO_API_BASE", twilio),
        ("SAUTI__TELEPHONY__TWILIO_AUTH_TOKEN", "token-for-the-fake"),
        ("SAUTI_BANKING_API", bank),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
    ]
}

fn converse(server: &Server, key: &str, body: Value) -> Value {
    let reply = post_json(&server.url("/v1/voice-agent/converse"), Some(key), &body);
    assert_eq!(reply.status, 200);
    reply.json()
}

/// The records key A holds, once `count` are there and every call has ended.
fn records(server: &Server, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut listed = Vec::new();
    wait_until(deadline, "the calls were recorded", || {
        let reply = get(&server.url("/v1/convai/conversations"), Some(KEY_A));
        listed = reply.json()["conversations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        listed.len() == count && listed.iter().all(|c| c["status"] == "done")
    });
    listed
}

fn speech(server: &Server, text: &str) -> Vec<u8> {
    let reply = post_json(
        &server.url("/v1/text-to-speech/baraka?output_format=pcm_16000"),
        Some(KEY_A),
        &json!({ "text": text }),
    );
    assert_eq!(reply.status, 200);
    base64::engine::general_purpose::STANDARD
        .decode(reply.json()["audio_base64"].as_str().unwrap())
        .unwrap()
}

#[test]
fn every_conversation_leaves_a_record_the_official_sdk_reads() {
    let _alone = common::alone();
    let twilio = FakeHttp::start(|_, _| Answer::json(500, json!({ "message": "down" })));
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "balance": "12,500" })));
    let data = temp_dir();
    let asr = fixture("whisper/model");
    let server = Server::start(
        data.path(),
        &env_of(asr.to_str().unwrap(), &twilio.base, &bank.base),
    );
    let base = server.url("");
    let base = base.trim_end_matches('/');

    // HTTP turns: the balance, then a PIN said aloud.
    let first = converse(
        &server,
        KEY_A,
        json!({ "text": "nataka kujua salio langu", "scenario": "banking" }),
    );
    let session = first["session_id"].as_str().unwrap().to_string();
    converse(
        &server,
        KEY_A,
        json!({ "text": "0123456789", "session_id": session }),
    );
    converse(
        &server,
        KEY_A,
        json!({ "text": format!("PIN yangu ni {PIN}"), "session_id": session }),
    );

    // A realtime socket: speech, then a goodbye; the agent hangs up.
    let mut socket = open(base, "/v1/voice-agent/realtime?scenario=general");
    let mut seen = Vec::new();
    for chunk in speech(&server, "Habari za asubuhi, naitwa Amina.").chunks(16_000) {
        let chunk = base64::engine::general_purpose::STANDARD.encode(chunk);
        send(&mut socket, json!({ "user_audio_chunk": chunk }));
    }
    let silence = base64::engine::general_purpose::STANDARD.encode(vec![0u8; 32_000]);
    send(&mut socket, json!({ "user_audio_chunk": silence }));
    until(&mut socket, "user_transcript", &mut seen);
    until_reply(&mut socket, &mut seen);
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "asante sana, kwaheri" }),
    );
    until_reply(&mut socket, &mut seen);
    let ended = until(&mut socket, "end_call", &mut seen);
    let said: Vec<&Value> = seen
        .iter()
        .filter(|m| m["type"] != "audio" && m["type"] != "ping")
        .collect();
    assert_eq!(ended["end_call_event"]["reason"], "farewell", "{said:?}");
    assert_eq!(closed(&mut socket, &mut seen), Some(1000));

    // A phone call: 0 for a person; Twilio refuses the transfer twice; the caller hangs up.
    let mut call = open(base, "/v1/voice-agent/twilio?scenario=banking");
    let stream = "MZ00000000000000000000000000000011";
    send(
        &mut call,
        json!({ "event": "start", "streamSid": stream, "start": { "streamSid": stream, "callSid": "CArecord1",
            "accountSid": "ACrecords", "customParameters": { "From": "+255712000111" } } }),
    );
    send(
        &mut call,
        json!({ "event": "dtmf", "streamSid": stream, "dtmf": { "digit": "0" } }),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    wait_until(deadline, "the transfer was tried twice", || {
        twilio.received().len() >= 2
    });
    std::thread::sleep(Duration::from_secs(2));
    send(&mut call, json!({ "event": "stop", "streamSid": stream }));
    closed(&mut call, &mut seen);

    let listed = records(&server, 3);
    let id_of = |agent: &str, direction: Option<&str>| -> String {
        listed
            .iter()
            .find(|c| c["agent_id"] == agent && c["direction"].as_str() == direction)
            .unwrap_or_else(|| panic!("{agent}: {listed:?}"))["conversation_id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let (http, realtime, phone) = (
        id_of("banking", None),
        id_of("general", None),
        id_of("banking", Some("inbound")),
    );
    assert_eq!(http, session, "HTTP turns are recorded under their session");

    let out = data.path().join("sdk");
    common::sdk::run(
        "elevenlabs_conversations.py",
        &[base, KEY_A, KEY_B, out.to_str().unwrap(), &http],
    );
    let text = std::fs::read_to_string(out.join("results.json")).unwrap();
    assert!(
        !holds_number(text.as_bytes(), PIN),
        "the PIN is in no record: {text}"
    );
    let results: Value = serde_json::from_str(&text).unwrap();
    let ids = |v: &Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };

    let all: Vec<String> = results["all"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(all.len(), 3);
    let paged: Vec<String> = results["pages"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(ids)
        .collect();
    assert_eq!(paged, all, "one at a time, by cursor, in the same order");
    let mut banking = ids(&results["banking"]);
    banking.sort();
    let mut expected = vec![http.clone(), phone.clone()];
    expected.sort();
    assert_eq!(banking, expected);
    let mut succeeded = ids(&results["success"]);
    succeeded.sort();
    let mut expected = vec![http.clone(), realtime.clone()];
    expected.sort();
    assert_eq!(
        succeeded, expected,
        "the balance was told; the caller said goodbye"
    );
    assert_eq!(ids(&results["search"]), vec![http.clone()]);
    assert!(ids(&results["after_first"]).is_empty());

    let conversations = &results["conversations"];
    let balance = &conversations[&http];
    assert!(
        balance["summary"].as_str().unwrap().contains("balance"),
        "{balance}"
    );
    let said = messages(balance);
    assert_eq!(said.len(), 6, "{said:?}");
    assert!(said[3].contains("12,500"), "{said:?}");
    assert_eq!(said[4], "PIN yangu ni ****");

    let spoken = &conversations[&realtime];
    assert_eq!(spoken["termination_reason"], "farewell");
    assert_eq!(spoken["call_successful"], "success");
    assert_eq!(spoken["has_audio"], true);
    let wav = hound::WavReader::open(out.join(format!("{realtime}.wav"))).unwrap();
    assert_eq!((wav.spec().channels, wav.spec().sample_rate), (2, 8_000));
    let samples: Vec<i16> = wav.into_samples().map(Result::unwrap).collect();
    let loud = |side: usize| {
        samples
            .iter()
            .skip(side)
            .step_by(2)
            .filter(|s| s.abs() > 1_000)
            .count()
    };
    assert!(loud(0) > 1_000, "the caller is on the left");
    assert!(loud(1) > 1_000, "the agent is on the right");

    let phoned = &conversations[&phone];
    assert_eq!(phoned["call_successful"], "failure", "the transfer failed");
    assert_eq!(phoned["termination_reason"], "disconnected");
    assert!(
        phoned["summary"]
            .as_str()
            .unwrap()
            .contains("transfer failed to +255222110000"),
        "{phoned}"
    );
    let whole = get(
        &server.url(&format!("/v1/convai/conversations/{phone}")),
        Some(KEY_A),
    )
    .json();
    let record = &whole["record"];
    assert_eq!(record["channel"], "twilio");
    assert_eq!(record["caller"], "+255712000111");
    assert_eq!(record["call_sid"], "CArecord1");
    assert_eq!(record["transfers"][0]["ok"], false);
    assert_eq!(record["transfers"][0]["summary"]["intent"], "human_agent");
    assert_eq!(record["turns"][0]["text"], "(vitufe) *");
    assert_eq!(record["turns"][1]["intent"], "human_agent");

    assert_eq!(results["other_key_get"], 404);
    assert_eq!(results["other_key_delete"], 404);
    assert_eq!(results["other_key_list"], json!([]));
    assert_eq!(results["delete"], 200);
    assert_eq!(results["get_after_delete"], 404);
    assert_eq!(results["delete_again"], 404);

    // The same under /elevenlabs, and what a client can get wrong.
    let page = get(
        &server.url("/elevenlabs/v1/convai/conversations?page_size=1"),
        Some(KEY_A),
    );
    assert_eq!(page.status, 200);
    assert_eq!(page.json()["has_more"], true);
    for query in [
        "page_size=0",
        "page_size=101",
        "cursor=bm90LW91cnM",
        "call_successful=maybe",
    ] {
        let refused = get(
            &server.url(&format!("/v1/convai/conversations?{query}")),
            Some(KEY_A),
        );
        assert_eq!(refused.status, 422, "{query}");
    }
    let audio = get(
        &server.url(&format!("/v1/convai/conversations/{phone}/audio")),
        Some(KEY_B),
    );
    assert_eq!(audio.status, 404);
}

#[test]
fn a_call_cut_by_kill_9_leaves_what_was_said() {
    let _alone = common::alone();
    let twilio = FakeHttp::start(|_, _| Answer::json(500, json!({})));
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "balance": "7,000" })));
    let data = temp_dir();
    let asr = fixture("whisper/model");
    let env = env_of(asr.to_str().unwrap(), &twilio.base, &bank.base);
    let server = Server::start(data.path(), &env);
    let base = server.url("");
    let mut socket = open(
        base.trim_end_matches('/'),
        "/v1/voice-agent/realtime?scenario=banking",
    );
    let mut seen = Vec::new();
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "nataka kujua salio langu" }),
    );
    let asked = until_reply(&mut socket, &mut seen);
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "akaunti yangu ni 0123456789" }),
    );
    let pin_asked = until_reply(&mut socket, &mut seen);
    send(
        &mut socket,
        json!({ "type": "user_dtmf", "digits": format!("{PIN}#") }),
    );
    let told = until_reply(&mut socket, &mut seen);
    assert!(told.contains("7,000"), "{told}");
    // The record is written as the call goes: give the store a moment, then cut the process dead.
    std::thread::sleep(Duration::from_millis(500));
    server.crash();
    drop(socket);

    let server = Server::start(data.path(), &env);
    let listed = get(&server.url("/v1/convai/conversations"), Some(KEY_A)).json();
    let calls = listed["conversations"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{listed}");
    assert_eq!(calls[0]["status"], "in-progress", "it never ended");
    let id = calls[0]["conversation_id"].as_str().unwrap();
    let whole = get(
        &server.url(&format!("/v1/convai/conversations/{id}")),
        Some(KEY_A),
    )
    .json();
    let said = messages(&whole);
    assert_eq!(
        said,
        [
            "nataka kujua salio langu",
            asked.as_str(),
            "akaunti yangu ni 0123456789",
            pin_asked.as_str(),
            "(vitufe) ****",
            told.as_str()
        ]
    );
    assert_eq!(
        whole["record"]["turns"][5]["actions"][0],
        json!({ "name": "balance", "ok": true })
    );
    assert!(!holds_number(whole.to_string().as_bytes(), PIN));
}
