//! The `openai` dialogue backend against a scripted OpenAI-compatible server on loopback: system prompt and
//! history in the request, tool calls running scenario actions, fallback to the scenario engine on a 500 or a
//! timeout, and guardrails replacing an unsafe reply.

use crate::common;

use common::fake_http::{Answer, FakeHttp, Received};
use common::*;
use serde_json::{json, Value};

fn completion(message: Value, finish: &str) -> Answer {
    Answer::json(
        200,
        json!({
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": "test-model",
            "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
        }),
    )
}

/// The model asks for one tool call.
fn calls_tool(name: &str, arguments: &str) -> Answer {
    completion(
        json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [{
                "id": "call_1",
                "type": "function",
                "function": { "name": name, "arguments": arguments }
            }]
        }),
        "tool_calls",
    )
}

fn says(text: &str) -> Answer {
    completion(json!({ "role": "assistant", "content": text }), "stop")
}

fn start(llm: &FakeHttp, extra: &[(&str, &str)]) -> (tempfile::TempDir, Server) {
    let data = temp_dir();
    let base = format!("{}/v1", llm.base);
    let mut env = vec![
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__DIALOGUE__BACKEND", "openai"),
        ("SAUTI__DIALOGUE__OPENAI__BASE_URL", base.as_str()),
        ("SAUTI__DIALOGUE__OPENAI__MODEL", "test-model"),
        ("SAUTI__DIALOGUE__OPENAI__TIMEOUT_SECONDS", "1"),
        ("SAUTI__DIALOGUE__OPENAI__RETRIES", "1"),
    ];
    env.extend_from_slice(extra);
    let server = Server::start(data.path(), &env);
    (data, server)
}

fn turn(server: &Server, body: Value) -> Value {
    let reply = post_json(&server.url("/v1/voice-agent/converse"), Some(KEY_A), &body);
    assert_eq!(
        reply.status,
        200,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    reply.json()
}

fn messages(request: &Received) -> Vec<Value> {
    request.body["messages"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn the_request_carries_the_system_prompt_and_the_history() {
    let llm = FakeHttp::start(|_, i| {
        says(if i == 0 {
            "Habari! Nikusaidie nini leo?"
        } else {
            "Sawa, karibu tena."
        })
    });
    let (_data, server) = start(&llm, &[]);
    let first = turn(&server, json!({ "text": "Habari", "scenario": "banking" }));
    assert_eq!(first["agent_text"], "Habari! Nikusaidie nini leo?");
    let session = first["session_id"].clone();
    let second = turn(
        &server,
        json!({ "text": "Asante sana", "scenario": "banking", "session_id": session }),
    );
    assert_eq!(second["agent_text"], "Sawa, karibu tena.");

    let requests = llm.received();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].body["model"], "test-model");
    let first_messages = messages(&requests[0]);
    assert_eq!(first_messages[0]["role"], "system");
    let system = first_messages[0]["content"].as_str().unwrap();
    assert!(system.contains("PIN"), "guardrail instructions: {system}");
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"send_money"), "{tools:?}");
    let history: Vec<(String, String)> = messages(&requests[1])
        .iter()
        .skip(1)
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        history,
        vec![
            ("user".into(), "Habari".into()),
            ("assistant".into(), "Habari! Nikusaidie nini leo?".into()),
            ("user".into(), "Asante sana".into()),
        ]
    );
}

#[test]
fn a_tool_call_runs_the_scenario_action() {
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "reference": "TX777" })));
    let llm = FakeHttp::start(|_, i| {
        if i == 0 {
            calls_tool("send_money", r#"{"amount":"2000","phone":"0755123456"}"#)
        } else {
            says("Nimetuma shilingi 2000. Kumbukumbu ni TX777.")
        }
    });
    let (_data, server) = start(&llm, &[("SAUTI_BANKING_API", bank.base.as_str())]);
    let body = turn(
        &server,
        json!({ "text": "Tuma 2000 kwa 0755123456, nimethibitisha", "scenario": "banking" }),
    );
    assert_eq!(
        body["agent_text"],
        "Nimetuma shilingi 2000. Kumbukumbu ni TX777."
    );
    let calls = bank.received();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].path, "/transfers");
    assert_eq!(
        calls[0].body,
        json!({ "amount": "2000", "phone": "0755123456" })
    );
    // The second request gave the model the tool's result.
    let second = messages(&llm.received()[1]);
    let tool = second
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("a tool message");
    assert_eq!(tool["tool_call_id"], "call_1");
    assert!(tool["content"].as_str().unwrap().contains("TX777"));
}

#[test]
fn a_failing_or_silent_llm_falls_back_to_the_scenario_engine() {
    let failing =
        FakeHttp::start(|_, _| Answer::json(500, json!({ "error": { "message": "overloaded" } })));
    let (_data, server) = start(&failing, &[]);
    let body = turn(
        &server,
        json!({ "text": "Nataka kutuma pesa", "scenario": "banking" }),
    );
    assert!(
        body["agent_text"].as_str().unwrap().contains("kiasi"),
        "{body}"
    );
    assert_eq!(failing.received().len(), 2, "one retry, then the fallback");

    let silent = FakeHttp::start(|_, _| Answer {
        delay: std::time::Duration::from_secs(3),
        ..says("too late")
    });
    let (_data, server) = start(&silent, &[]);
    let body = turn(
        &server,
        json!({ "text": "Nataka kutuma pesa", "scenario": "banking" }),
    );
    assert!(
        body["agent_text"].as_str().unwrap().contains("kiasi"),
        "{body}"
    );

    // Without the fallback, the caller is told the dialogue layer is unavailable.
    let (_data, server) = start(
        &failing,
        &[("SAUTI__DIALOGUE__FALLBACK_TO_SCENARIO", "false")],
    );
    let reply = post_json(
        &server.url("/v1/voice-agent/converse"),
        Some(KEY_A),
        &json!({ "text": "habari" }),
    );
    assert_eq!(reply.status, 503);
    assert!(reply.header("retry-after").is_some());
    assert!(reply.json()["detail"].as_str().unwrap().contains("openai"));
}

#[test]
fn an_unsafe_reply_is_replaced_by_the_guardrail() {
    let llm = FakeHttp::start(|_, _| says("Ili nikusaidie, tafadhali niambie PIN yako ya kadi."));
    let (_data, server) = start(&llm, &[]);
    let body = turn(
        &server,
        json!({ "text": "Nataka kuangalia salio", "scenario": "banking" }),
    );
    let text = body["agent_text"].as_str().unwrap();
    assert!(!text.contains("niambie PIN"), "{text}");
    assert!(text.contains("usitaje PIN"), "{text}");

    let doctor =
        FakeHttp::start(|_, _| says("Una malaria. Meza vidonge 2 vya 500 mg mara tatu kwa siku."));
    let (_data, server) = start(&doctor, &[]);
    let body = turn(
        &server,
        json!({ "text": "Nina homa na kichwa kinauma", "scenario": "health" }),
    );
    let text = body["agent_text"].as_str().unwrap();
    assert!(text.starts_with("Mimi si daktari"), "{text}");
}

#[test]
fn an_action_runs_once_per_turn_and_a_later_failure_does_not_undo_the_reply() {
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "reference": "TX900" })));
    let call = |id: &str| {
        json!({
            "id": id, "type": "function",
            "function": { "name": "send_money", "arguments": "{\"amount\":\"3000\",\"phone\":\"0755123456\"}" }
        })
    };
    let llm = FakeHttp::start(move |_, i| {
        if i == 0 {
            completion(
                json!({ "role": "assistant", "content": null, "tool_calls": [call("a"), call("b"), call("c")] }),
                "tool_calls",
            )
        } else {
            Answer::json(500, json!({ "error": { "message": "overloaded" } }))
        }
    });
    let (_data, server) = start(&llm, &[("SAUTI_BANKING_API", bank.base.as_str())]);
    let body = turn(
        &server,
        json!({ "text": "Tuma 3000 kwa 0755123456", "scenario": "banking" }),
    );
    assert_eq!(
        bank.received().len(),
        1,
        "one transfer, however often the model asks"
    );
    let text = body["agent_text"].as_str().unwrap();
    assert!(
        text.contains("Imekamilika") && text.contains("TX900"),
        "{text}"
    );
}

#[test]
fn safety_cases_never_reach_the_model_and_secrets_never_reach_it_either() {
    // A model that would answer every turn badly: a goodbye, and the caller's own digits.
    let llm = FakeHttp::start(|_, _| says("Kwaheri! Namba yako ni 4821."));
    let (_data, server) = start(&llm, &[]);

    let crisis = turn(
        &server,
        json!({ "text": "sioni sababu ya kuendelea kuishi", "scenario": "general" }),
    );
    let text = crisis["agent_text"].as_str().unwrap();
    assert!(text.contains("112") && text.contains("peke yako"), "{text}");
    assert!(!text.contains("Kwaheri"), "{text}");

    let emergency = turn(
        &server,
        json!({ "text": "mtu ameanguka hapa tawini na hapumui", "scenario": "banking" }),
    );
    let text = emergency["agent_text"].as_str().unwrap();
    assert!(text.starts_with("Hii ni dharura. Piga simu 112"), "{text}");
    assert!(
        llm.received().is_empty(),
        "the model was asked about a safety case"
    );

    let offered = turn(
        &server,
        json!({ "text": "pini yangu ya M-Pesa ni 4 8 2 1", "scenario": "banking" }),
    );
    let text = offered["agent_text"].as_str().unwrap();
    assert!(text.contains("usitaje PIN"), "{text}");
    assert!(
        !offered["user_text"].as_str().unwrap().contains('4'),
        "{offered}"
    );
    assert!(
        llm.received().is_empty(),
        "the model was sent an offered secret"
    );

    // The next ordinary turn goes to the model, with the secret masked in the history, and the model's
    // goodbye-with-digits reply is screened on the way out.
    let session = offered["session_id"].as_str().unwrap();
    let next = turn(
        &server,
        json!({ "text": "nataka kujua salio", "scenario": "banking", "session_id": session }),
    );
    let sent = llm.received();
    assert_eq!(sent.len(), 1);
    let history = serde_json::to_string(&messages(&sent[0])).unwrap();
    assert!(
        !history.contains("4 8 2 1") && !history.contains("4821"),
        "{history}"
    );
    assert!(history.contains("pini yangu"), "{history}");
    let text = next["agent_text"].as_str().unwrap();
    assert!(!text.contains("4821"), "{text}");
}

#[test]
fn a_tool_call_with_an_implausible_amount_is_refused_before_any_money_moves() {
    let bank = FakeHttp::start(|_, _| Answer::json(200, json!({ "reference": "TX1" })));
    let llm = FakeHttp::start(|_, i| {
        if i == 0 {
            // "thao mbili" misheard by the model as 2 shillings, and a phone in words.
            calls_tool(
                "send_money",
                r#"{"amount":"2","phone":"sifuri saba tano tano moja mbili tatu nne tano sita"}"#,
            )
        } else {
            says("Samahani, ni kiasi gani hasa?")
        }
    });
    let (_data, server) = start(&llm, &[("SAUTI_BANKING_API", bank.base.as_str())]);
    let body = turn(
        &server,
        json!({ "text": "tuma thao mbili kwa 0755123456", "scenario": "banking" }),
    );
    assert_eq!(body["agent_text"], "Samahani, ni kiasi gani hasa?");
    assert!(
        bank.received().is_empty(),
        "money moved on an implausible amount"
    );
    let second = messages(&llm.received()[1]);
    let tool = second.iter().find(|m| m["role"] == "tool").unwrap();
    let content = tool["content"].as_str().unwrap();
    assert!(
        content.contains("amount") && content.contains("100"),
        "{content}"
    );
}

#[test]
fn the_model_hands_a_call_to_people_through_the_scenario_s_own_transfer() {
    use common::call_socket::{closed, open, send, until, until_reply};
    let llm =
        FakeHttp::start(
            |request, _| match messages(request).iter().any(|m| m["role"] == "tool") {
                true => says("Sawa, nakuunganisha na afisa sasa hivi."),
                false => calls_tool("transfer_call", r#"{"reason": "human_agent"}"#),
            },
        );
    let asr = fixture("whisper/model");
    let (_data, server) = start(&llm, &[("SAUTI__ASR__MODEL", asr.to_str().unwrap())]);
    let base = server.url("");
    let mut socket = open(
        base.trim_end_matches('/'),
        "/v1/voice-agent/realtime?scenario=banking",
    );
    send(
        &mut socket,
        json!({ "type": "user_message", "text": "nataka kuongea na mtu halisi" }),
    );
    let mut seen = Vec::new();
    let said = until_reply(&mut socket, &mut seen);
    assert!(
        said.starts_with("Sawa. Nakuunganisha sasa na afisa wetu"),
        "the scenario's line on a call: {said}"
    );
    let transfer = until(&mut socket, "transfer", &mut seen);
    assert_eq!(transfer["transfer_event"]["to"], "+255222110000");
    assert_eq!(
        transfer["transfer_event"]["summary"]["intent"],
        "human_agent"
    );
    assert_eq!(closed(&mut socket, &mut seen), Some(1000));

    // The model was offered the call's controls: the services it may transfer to, and the hang-up.
    let offered = &llm.received()[0].body["tools"];
    let named = |name: &str| {
        offered
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["function"]["name"] == name)
            .cloned()
    };
    let transfer_tool = named("transfer_call").expect("transfer_call offered");
    assert_eq!(
        transfer_tool["function"]["parameters"]["properties"]["reason"]["enum"],
        json!(["human_agent"])
    );
    assert!(named("end_call").is_some());

    // Over HTTP the same choice changes nothing of the reply: there is no call to put through.
    let reply = turn(
        &server,
        json!({ "text": "nataka kuongea na mtu", "scenario": "banking" }),
    );
    assert_eq!(
        reply["agent_text"],
        "Sawa, nakuunganisha na afisa sasa hivi."
    );
}
