//! Keys pressed on a call (DTMF), from outside: the ConvAI socket's `user_dtmf` and Twilio's `dtmf` events reach
//! the banking scenario, "1" stands for the balance, the account and the PIN are keyed, and the bank is asked for
//! the balance with the PIN's digest. The PIN's digits appear nowhere: not in what the socket sends back, not in
//! the debug log, not in `/metrics`, not in any file the server wrote.

use crate::common;

use std::time::Duration;

use common::call_socket::{open, send, until_reply, Socket};
use common::fake_http::{Answer, FakeHttp};
use common::*;
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

const PIN: &str = "4821";

#[test]
fn a_pin_keyed_on_a_call_completes_the_balance_and_its_digits_are_nowhere() {
    let _alone = common::alone();
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "balance": "12,500" })));
    let dir = temp_dir();
    let log = dir.path().join("stderr.log");
    let mut server = common::logged::Logged::start(
        dir.path(),
        &log,
        &[],
        &[
            (
                "SAUTI__ASR__MODEL",
                fixture("whisper/model").display().to_string(),
            ),
            ("SAUTI_BANKING_API", bank.base.clone()),
            ("RUST_LOG", "debug".into()),
        ],
    );
    let base = server.base.clone();

    // The ConvAI socket: "1" for the balance, then the account and the PIN, each ended with #.
    let mut socket = open(
        &base,
        "/v1/voice-agent/realtime?scenario=banking&output_format=pcm_16000",
    );
    let mut seen = Vec::new();
    send(&mut socket, json!({ "type": "user_dtmf", "digits": "1#" }));
    let asked = until_reply(&mut socket, &mut seen);
    assert!(asked.contains("akaunti"), "{asked}");
    send(
        &mut socket,
        json!({ "type": "user_dtmf", "digits": "0123456789#" }),
    );
    let pin_asked = until_reply(&mut socket, &mut seen);
    assert!(pin_asked.contains("bonyeza PIN"), "{pin_asked}");
    for key in PIN.chars().map(String::from).chain(["#".to_string()]) {
        send(&mut socket, json!({ "type": "user_dtmf", "digit": key }));
    }
    let answered = until_reply(&mut socket, &mut seen);
    assert!(answered.contains("12,500"), "{answered}");
    let transcripts: Vec<&Value> = seen
        .iter()
        .filter(|m| m["type"] == "user_transcript")
        .collect();
    assert_eq!(transcripts.len(), 3, "{seen:?}");
    assert_eq!(
        transcripts[2]["user_transcription_event"]["user_transcript"],
        "(vitufe) ****"
    );
    // Keys that are not keys are refused with 1008.
    send(&mut socket, json!({ "type": "user_dtmf", "digits": "12a" }));
    let closed = loop {
        match socket.read() {
            Ok(Message::Close(frame)) => break frame.map(|f| u16::from(f.code)),
            Ok(_) => continue,
            Err(_) => break None,
        }
    };
    assert_eq!(closed, Some(1008));

    // Twilio: the same keys as `dtmf` events complete the same step.
    let mut call = open(&base, "/v1/voice-agent/twilio?scenario=banking");
    let sid = "MZ00000000000000000000000000000002";
    send(
        &mut call,
        json!({ "event": "connected", "protocol": "Call", "version": "1.0.0" }),
    );
    send(
        &mut call,
        json!({ "event": "start", "streamSid": sid, "start": { "streamSid": sid, "callSid": "CA2" } }),
    );
    let press = |call: &mut Socket, keys: &str| {
        for digit in keys.chars() {
            send(
                call,
                json!({ "event": "dtmf", "streamSid": sid, "dtmf": { "track": "inbound_track", "digit": digit.to_string() } }),
            );
        }
        std::thread::sleep(Duration::from_millis(1_500));
    };
    press(&mut call, "1#");
    press(&mut call, "9876543210#");
    press(&mut call, &format!("{PIN}#"));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    wait_until(deadline, "the bank asked for the balance twice", || {
        bank.received().len() >= 2
    });
    let _ = call.close(None);

    let asked: Vec<String> = bank.received().iter().map(|r| r.path.clone()).collect();
    assert_eq!(asked.len(), 2, "{asked:?}");
    for path in &asked {
        assert!(
            path.contains("pin=sha256%3A") || path.contains("pin=sha256:"),
            "{path}"
        );
        assert!(!path.contains(PIN), "{path}");
    }
    assert!(asked[1].contains("9876543210"), "{asked:?}");

    let metrics = String::from_utf8(get(&format!("{base}/metrics"), None).body).unwrap();
    assert!(!holds_number(metrics.as_bytes(), PIN), "{metrics}");
    server.stop();
    let written = std::fs::read_to_string(&log).unwrap();
    assert!(written.contains("DEBUG"), "the log was written at debug");
    for line in written.lines() {
        // The line's timestamp is left out of the search: its microseconds may spell any four digits.
        let said = line.split_once(' ').map_or(line, |(_, rest)| rest);
        assert!(!holds_number(said.as_bytes(), PIN), "{line}");
    }
    for entry in walk(dir.path()) {
        if entry.ends_with("stderr.log") {
            continue;
        }
        let bytes = std::fs::read(&entry).unwrap_or_default();
        assert!(!holds_number(&bytes, PIN), "{}", entry.display());
    }
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match path.is_dir() {
            true => files.extend(walk(&path)),
            false => files.push(path),
        }
    }
    files
}
