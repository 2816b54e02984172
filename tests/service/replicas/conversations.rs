//! What a caller made on one replica, used on the other: a cloned voice and an agent conversation.

use super::{replicas, Postgres};
use crate::common::fake_http::{Answer, FakeHttp};
use crate::common::*;
use serde_json::json;

#[test]
fn a_voice_cloned_on_one_replica_is_listed_and_speaks_on_the_other_at_once_until_deleted() {
    let postgres = Postgres::start();
    let data = (temp_dir(), temp_dir());
    let url = postgres.url();
    let env = [
        ("SAUTI__STORAGE__URL", url.as_str()),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
    ];
    let a = Server::start(data.0.path(), &env);
    let b = Server::start(data.1.path(), &env);
    let reference = crate::common::cloning::reference("low.wav");
    let made = crate::common::cloning::clone(
        &a,
        KEY_A,
        Some(("audio/wav", &reference)),
        &[("name", "Bi Mwanaisha"), ("consent", "true")],
    );
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let voice = made.json()["voice_id"].as_str().unwrap().to_string();
    // At once on B: listed (in both voice lists) and speaking; never for another key.
    let listed = get(&b.url("/v1/voices"), Some(KEY_A)).json();
    assert!(listed.to_string().contains(&voice), "{listed}");
    let eleven = get(&b.url("/elevenlabs/v1/voices"), Some(KEY_A)).json();
    assert!(eleven.to_string().contains(&voice), "{eleven}");
    let speak = |server: &Server, key: &str| crate::common::cloning::speak(server, key, &voice);
    assert_eq!(speak(&b, KEY_A).status, 200);
    assert_eq!(speak(&b, KEY_B).status, 404);
    let other = get(&b.url("/v1/voices"), Some(KEY_B)).json();
    assert!(!other.to_string().contains(&voice), "{other}");

    // Deleted on B: at once gone from A, which knew it.
    assert_eq!(speak(&a, KEY_A).status, 200);
    let deleted = method(
        "DELETE",
        &b.url(&format!("/v1/voices/{voice}")),
        Some(KEY_A),
    );
    assert!(
        deleted.status == 200 || deleted.status == 204,
        "{}",
        deleted.status
    );
    assert_eq!(speak(&a, KEY_A).status, 404);
    let listed = get(&a.url("/v1/voices"), Some(KEY_A)).json();
    assert!(!listed.to_string().contains(&voice), "{listed}");
    assert_eq!(
        get(&a.url(&format!("/v1/voices/{voice}")), Some(KEY_A)).status,
        404
    );
}

fn converse(server: &Server, key: &str, body: serde_json::Value) -> Reply {
    post_json(&server.url("/v1/voice-agent/converse"), Some(key), &body)
}

#[test]
fn an_agent_conversation_goes_on_whichever_replica_the_next_turn_reaches() {
    let bank = FakeHttp::start(|_, _| Answer::json(201, json!({ "reference": "TX7781" })));
    let postgres = Postgres::start();
    let data = temp_dir();
    let (a, b) = replicas(
        &postgres,
        &data,
        &[("SAUTI_BANKING_API", bank.base.as_str())],
    );

    // A transfer begun on A is given its amount and number on B …
    let first = converse(
        &a,
        KEY_A,
        json!({ "text": "Ningependa kumtumia mama pesa", "scenario": "banking" }),
    );
    assert!(
        agent_text(&first).contains("kiasi"),
        "{}",
        agent_text(&first)
    );
    let session = first.json()["session_id"].as_str().unwrap().to_string();
    let second = converse(
        &b,
        KEY_A,
        json!({ "text": "elfu mbili na mia tano kwa 0755 111 222", "session_id": session }),
    );
    let asked = agent_text(&second);
    assert_eq!(second.json()["scenario"], "banking", "the session's own");
    assert!(
        asked.contains("elfu mbili") && asked.contains("Nithibitishe"),
        "{asked}"
    );

    // … is private to its key and bound to its scenario on B as on A …
    for server in [&a, &b] {
        let stranger = converse(
            server,
            KEY_B,
            json!({ "text": "Ndiyo", "session_id": session }),
        );
        assert_eq!(stranger.status, 404);
        let other = converse(
            server,
            KEY_A,
            json!({ "text": "Ndiyo", "scenario": "health", "session_id": session }),
        );
        assert_eq!(other.status, 409);
    }

    // … and confirmed after A is gone, the transfer made once, as heard.
    a.crash();
    let done = agent_text(&converse(
        &b,
        KEY_A,
        json!({ "text": "Ndiyo", "session_id": session }),
    ));
    assert!(done.contains("TX7781"), "{done}");
    let calls = bank.received();
    assert_eq!(calls.len(), 1);
    assert_eq!(
        calls[0].body,
        json!({ "amount": "2500", "phone": "0755111222" })
    );

    // Its record, in the shared store, holds the turns taken on both replicas; another key gets 404.
    let path = format!("/v1/convai/conversations/{session}");
    let record = get(&b.url(&path), Some(KEY_A));
    assert_eq!(record.status, 200);
    let record = record.json();
    let transcript = record["transcript"].as_array().unwrap();
    assert_eq!(transcript.len(), 6, "{record}");
    assert_eq!(transcript[0]["message"], "Ningependa kumtumia mama pesa");
    assert_eq!(
        record["analysis"]["call_successful"], "success",
        "the money was sent"
    );
    assert_eq!(get(&b.url(&path), Some(KEY_B)).status, 404);
}

#[test]
fn turns_of_one_conversation_sent_to_both_replicas_at_once_are_taken_in_turn() {
    let postgres = Postgres::start();
    let data = temp_dir();
    let (a, b) = replicas(&postgres, &data, &[]);
    let first = converse(&a, KEY_A, json!({ "text": "Habari yako" }));
    let session = first.json()["session_id"].as_str().unwrap().to_string();
    let replies: Vec<Reply> = std::thread::scope(|scope| {
        let turns: Vec<_> = (0..6)
            .map(|i| {
                let server = if i % 2 == 0 { &a } else { &b };
                let session = session.clone();
                scope.spawn(move || {
                    converse(
                        server,
                        KEY_A,
                        json!({ "text": format!("Swali namba {i}: mnafungua saa ngapi?"), "session_id": session }),
                    )
                })
            })
            .collect();
        turns.into_iter().map(|t| t.join().unwrap()).collect()
    });
    for reply in &replies {
        agent_text(reply);
        assert_eq!(reply.json()["session_id"], session.as_str());
    }
    let last = converse(
        &b,
        KEY_A,
        json!({ "text": "Asante", "session_id": session }),
    );
    agent_text(&last);
    // No turn was lost to another running at once: the stored history holds every one of the 8, both sides.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let state: String = runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&postgres.url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .query_one(
                "SELECT state FROM agent_sessions WHERE id = $1",
                &[&session],
            )
            .await
            .unwrap()
            .get(0)
    });
    let state: serde_json::Value = serde_json::from_str(&state).unwrap();
    let history = state["history"].as_array().expect("history");
    assert_eq!(history.len(), 16, "{state}");
    for i in 0..6 {
        let asked = format!("Swali namba {i}");
        assert!(
            history.iter().any(|line| line.to_string().contains(&asked)),
            "turn {i} lost: {state}"
        );
    }
}

#[test]
fn a_neural_clone_made_on_one_replica_sounds_the_same_on_the_other() {
    use base64::Engine as _;
    let postgres = Postgres::start();
    let data = (temp_dir(), temp_dir());
    let (url, library) = (postgres.url(), onnxruntime());
    let converter = fixture("openvoice/model");
    let env = [
        ("SAUTI__STORAGE__URL", url.as_str()),
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
        ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
        ("SAUTI__CLONE__CONVERTER", converter.to_str().unwrap()),
    ];
    let a = Server::start(data.0.path(), &env);
    let b = Server::start(data.1.path(), &env);
    let reference = crate::common::cloning::reference("low.wav");
    let made = crate::common::cloning::clone(&a, KEY_A, Some(("audio/wav", &reference)), &[]);
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    assert_eq!(made.json()["method"], "neural");
    let voice = made.json()["voice_id"].as_str().unwrap().to_string();
    // B rebuilds it from the stored profile (tone colours, base, converter): the same audio for the same text.
    let audio = |server: &Server| {
        let reply = crate::common::cloning::speak(server, KEY_A, &voice);
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        base64::engine::general_purpose::STANDARD
            .decode(reply.json()["audio_base64"].as_str().unwrap())
            .unwrap()
    };
    assert_eq!(audio(&b), audio(&a));
    let listed = get(&b.url(&format!("/v1/voices/{voice}")), Some(KEY_A)).json();
    assert!(
        listed["description"]
            .as_str()
            .unwrap()
            .contains("openvoice-v2"),
        "{listed}"
    );
}
