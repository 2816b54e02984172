//! Calls handed to people, from outside, with a fake Twilio REST API that records what it is asked: a Twilio
//! Media Stream whose caller presses 0 is put through to the scenario's line by a Calls update with `<Dial>`; an
//! emergency typed on a ConvAI socket that names its phone call (`system__call_sid`) gets the emergency reply,
//! then a Calls update dialling the emergency line, then a `transfer` event with the call's summary; a caller who
//! says "hapana" in time keeps the agent; a farewell hangs up through the REST API; a transfer the carrier refuses
//! is tried twice, then the caller is told and the call goes on; a socket with no phone call behind it gets the
//! `transfer` event for its own client to act on. A call's variables (ConvAI `dynamic_variables`, Twilio
//! `customParameters`) fill replies and actions; a `secret__` one reaches the action alone.

use crate::common;

use std::time::{Duration, Instant};

use base64::Engine as _;
use common::call_socket::{closed, open, send, until, until_reply};
use common::fake_http::{Answer, FakeHttp};
use common::*;
use serde_json::json;

const ACCOUNT: &str = "ACtestaccount";
const TOKEN: &str = "twilio-auth-token-7731";

/// A server on the test scenario, its Twilio REST calls going to `twilio`.
fn call_centre(data: &std::path::Path, twilio: &FakeHttp) -> Server {
    call_centre_with(data, twilio, "http://127.0.0.1:9")
}

/// The same, its scenario's lookups going to `crm`.
fn call_centre_with(data: &std::path::Path, twilio: &FakeHttp, crm: &str) -> Server {
    let folder = data.join("scenarios");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/heavy/transfers/simu.toml"),
        folder.join("simu.toml"),
    )
    .unwrap();
    let (asr, folder) = (fixture("whisper/model"), folder.display().to_string());
    Server::start(
        data,
        &[
            ("SAUTI__ASR__MODEL", asr.to_str().unwrap()),
            ("SAUTI__DIALOGUE__SCENARIOS_DIR", folder.as_str()),
            ("SAUTI__TELEPHONY__TWILIO_API_BASE", twilio.base.as_str()),
            ("SAUTI__TELEPHONY__TWILIO_ACCOUNT_SID", ACCOUNT),
            ("SAUTI__TELEPHONY__TWILIO_AUTH_TOKEN", TOKEN),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI_TEST_CRM", crm),
        ],
    )
}

fn calls_path(call_sid: &str) -> String {
    format!("/2010-04-01/Accounts/{ACCOUNT}/Calls/{call_sid}.json")
}

fn wait_for(twilio: &FakeHttp, count: usize, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    wait_until(deadline, what, || twilio.received().len() >= count);
}

#[test]
fn calls_are_put_through_to_people_by_twilio_and_a_caller_may_decline() {
    let _alone = common::alone();
    let twilio =
        FakeHttp::start(|_, _| Answer::json(200, json!({ "sid": "CA", "status": "in-progress" })));
    let data = temp_dir();
    let server = call_centre(data.path(), &twilio);
    let base = server.url("");
    let base = base.trim_end_matches('/');

    // A phone call through Twilio Media Streams: 0 asks for a person.
    let mut call = open(base, "/v1/voice-agent/twilio?scenario=simu");
    let stream = "MZ00000000000000000000000000000007";
    send(
        &mut call,
        json!({ "event": "connected", "protocol": "Call", "version": "1.0.0" }),
    );
    send(
        &mut call,
        json!({ "event": "start", "streamSid": stream, "start": { "streamSid": stream,
            "callSid": "CAphone1", "accountSid": ACCOUNT, "customParameters": { "From": "+255700000001" } } }),
    );
    send(
        &mut call,
        json!({ "event": "dtmf", "streamSid": stream, "dtmf": { "track": "inbound_track", "digit": "0" } }),
    );
    wait_for(&twilio, 1, "Twilio was asked to put the call through");
    let update = &twilio.received()[0];
    assert_eq!(update.method, "POST");
    assert_eq!(update.path, calls_path("CAphone1"));
    assert_eq!(
        update.form("Twiml").as_deref(),
        Some("<Response><Dial><Sip>sip:wahudumu@benki.example</Sip></Dial></Response>")
    );
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{ACCOUNT}:{TOKEN}"));
    assert_eq!(
        update.header("authorization"),
        Some(format!("Basic {basic}").as_str())
    );
    let mut seen = Vec::new();
    assert_eq!(closed(&mut call, &mut seen), Some(1000));
    // Twilio's stream carries audio alone: the agent's line was spoken, nothing else was sent.
    assert!(seen.iter().any(|m| m["event"] == "media"), "{seen:?}");

    // An emergency on a socket that carries a phone call: the reply, then the emergency line.
    let mut socket = open(base, "/v1/voice-agent/realtime?scenario=simu");
    send(
        &mut socket,
        json!({ "type": "conversation_initiation_client_data",
            "dynamic_variables": { "system__call_sid": "CAphone2", "system__caller_id": "+255700000002" } }),
    );
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "Mtoto wangu ana degedege sasa hivi" }),
    );
    let mut seen = Vec::new();
    let reply = until_reply(&mut socket, &mut seen);
    assert!(
        reply.starts_with("Hii ni dharura.") && reply.ends_with("Nakuunganisha na 112."),
        "{reply}"
    );
    let transfer = until(&mut socket, "transfer", &mut seen);
    let event = &transfer["transfer_event"];
    assert_eq!(event["to"], "112");
    assert_eq!(event["summary"]["safety"], "emergency");
    assert_eq!(event["summary"]["intent"], "emergency");
    assert_eq!(event["summary"]["turns"], 1);
    let ended = until(&mut socket, "end_call", &mut seen);
    assert_eq!(ended["end_call_event"]["reason"], "transferred");
    assert_eq!(closed(&mut socket, &mut seen), Some(1000));
    let asked = twilio.received();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[1].path, calls_path("CAphone2"));
    assert_eq!(
        asked[1].form("Twiml").as_deref(),
        Some("<Response><Dial>112</Dial></Response>")
    );

    // "Hapana" in time: no transfer; the call goes on, and a farewell hangs it up.
    let mut socket = open(base, "/v1/voice-agent/realtime?scenario=simu");
    send(
        &mut socket,
        json!({ "type": "conversation_initiation_client_data",
            "dynamic_variables": { "system__call_sid": "CAphone3" } }),
    );
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "mtoto wangu ana degedege" }),
    );
    let mut seen = Vec::new();
    until_reply(&mut socket, &mut seen);
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "hapana" }),
    );
    assert_eq!(
        until_reply(&mut socket, &mut seen),
        "Sawa, sitakuunganisha."
    );
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(
        twilio.received().len(),
        2,
        "declined: nothing was asked of Twilio"
    );
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "asante, kwaheri" }),
    );
    assert_eq!(until_reply(&mut socket, &mut seen), "Kwaheri!");
    let ended = until(&mut socket, "end_call", &mut seen);
    assert_eq!(ended["end_call_event"]["reason"], "farewell");
    assert_eq!(closed(&mut socket, &mut seen), Some(1000));
    assert!(!seen.iter().any(|m| m["type"] == "transfer"), "{seen:?}");
    wait_for(&twilio, 3, "Twilio was asked to hang up");
    let hang_up = &twilio.received()[2];
    assert_eq!(hang_up.path, calls_path("CAphone3"));
    assert_eq!(hang_up.form("Status").as_deref(), Some("completed"));
    drop(server);
}

#[test]
fn a_transfer_the_carrier_refuses_is_tried_again_then_the_caller_is_told() {
    let _alone = common::alone();
    let twilio = FakeHttp::start(|_, _| Answer::json(500, json!({ "message": "internal error" })));
    let data = temp_dir();
    let server = call_centre(data.path(), &twilio);
    let base = server.url("");
    let base = base.trim_end_matches('/');

    let mut socket = open(base, "/v1/voice-agent/realtime?scenario=simu");
    send(
        &mut socket,
        json!({ "type": "conversation_initiation_client_data",
            "dynamic_variables": { "system__call_sid": "CAfails1" } }),
    );
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "niunganishe na mhudumu tafadhali" }),
    );
    let mut seen = Vec::new();
    assert_eq!(
        until_reply(&mut socket, &mut seen),
        "Nakuunganisha na mhudumu."
    );
    assert_eq!(
        until_reply(&mut socket, &mut seen),
        "Sikuweza kukuunganisha."
    );
    let asked = twilio.received();
    assert_eq!(asked.len(), 2, "tried twice: {asked:?}");
    assert!(asked.iter().all(|r| r.path == calls_path("CAfails1")));
    assert!(
        !seen
            .iter()
            .any(|m| m["type"] == "transfer" || m["type"] == "end_call"),
        "{seen:?}"
    );
    // The call goes on with the agent.
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "kwaheri" }),
    );
    assert_eq!(until_reply(&mut socket, &mut seen), "Kwaheri!");
    drop(socket);

    // A socket with no phone call behind it: its own client is told to put the call through.
    let mut socket = open(base, "/v1/voice-agent/realtime?scenario=simu");
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "nataka kuongea na mtu" }),
    );
    let mut seen = Vec::new();
    let transfer = until(&mut socket, "transfer", &mut seen);
    assert_eq!(
        transfer["transfer_event"]["to"],
        "sip:wahudumu@benki.example"
    );
    assert_eq!(transfer["transfer_event"]["summary"]["safety"], json!(null));
    assert_eq!(closed(&mut socket, &mut seen), Some(1000));
    assert!(
        twilio.received().len() <= 3,
        "no new call was asked of Twilio beyond the hang-up"
    );
    drop(server);
}

#[test]
fn a_call_s_variables_fill_replies_and_actions_and_a_secret_one_only_the_action() {
    let _alone = common::alone();
    let twilio = FakeHttp::start(|_, _| Answer::json(200, json!({})));
    let crm = FakeHttp::start(|_, _| Answer::json(200, json!({ "state": "tayari" })));
    let data = temp_dir();
    let server = call_centre_with(data.path(), &twilio, &crm.base);
    let base = server.url("");
    let base = base.trim_end_matches('/');
    let secret = "tk-5521-siri";

    let mut socket = open(base, "/v1/voice-agent/realtime?scenario=simu");
    send(
        &mut socket,
        json!({ "type": "conversation_initiation_client_data", "dynamic_variables": {
            "jina": "Asha", "customer_id": "C-77", "tawi": "Arusha", "secret__token": secret,
            "system__caller_id": "+255700000002" } }),
    );
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "hali ya ombi langu tafadhali" }),
    );
    let mut seen = Vec::new();
    let reply = until_reply(&mut socket, &mut seen);
    assert_eq!(
        reply,
        "Habari Asha. Ombi la namba +255700000002 liko tayari."
    );
    let conversation = seen[0]["conversation_initiation_metadata_event"]["conversation_id"]
        .as_str()
        .unwrap()
        .to_string();
    drop(socket);
    let asked = crm.received();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].path, "/customers/C-77/requests");
    assert_eq!(
        asked[0].body,
        json!({ "branch": "Arusha", "token": secret, "caller": "+255700000002" })
    );

    // Twilio's customParameters do the same on a phone call; the key 5 asks for the status.
    let mut call = open(base, "/v1/voice-agent/twilio?scenario=simu");
    let stream = "MZ00000000000000000000000000000009";
    send(
        &mut call,
        json!({ "event": "start", "streamSid": stream, "start": { "streamSid": stream, "callSid": "CAvars",
            "customParameters": { "From": "+255700000003", "jina": "Juma", "customer_id": "C 9/1",
                "tawi": "Mwanza", "secret__token": secret } } }),
    );
    send(
        &mut call,
        json!({ "event": "dtmf", "streamSid": stream, "dtmf": { "digit": "5" } }),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    wait_until(deadline, "the lookup was made", || {
        crm.received().len() >= 2
    });
    let looked_up = &crm.received()[1];
    assert_eq!(
        looked_up.path, "/customers/C%209%2F1/requests",
        "a value is encoded into the URL"
    );
    assert_eq!(looked_up.body["caller"], "+255700000003");
    assert_eq!(looked_up.body["branch"], "Mwanza");
    drop(call);

    // The secret is in no record.
    let deadline = Instant::now() + Duration::from_secs(10);
    wait_until(deadline, "both calls were recorded", || {
        let listed = get(&server.url("/v1/convai/conversations"), Some(KEY_A)).json();
        listed["conversations"]
            .as_array()
            .is_some_and(|c| c.len() == 2 && c.iter().all(|c| c["status"] == "done"))
    });
    let record = get(
        &server.url(&format!("/v1/convai/conversations/{conversation}")),
        Some(KEY_A),
    );
    assert_eq!(record.status, 200);
    let text = String::from_utf8_lossy(&record.body).to_string();
    assert!(
        text.contains("Habari Asha") && !text.contains(secret),
        "{text}"
    );
    let listed = get(&server.url("/v1/convai/conversations"), Some(KEY_A));
    assert!(!String::from_utf8_lossy(&listed.body).contains(secret));
}
