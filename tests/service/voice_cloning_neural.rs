//! Neural cloning, black-box: with the tone-colour converter installed (the OpenVoice fixture of
//! `tools/make_openvoice_fixtures.py`), a new clone is its base voice re-voiced with the speaker's tone colour;
//! it names the converter, speaks through sync synthesis, streams, jobs and the agent, and is rebuilt the same
//! after a restart. Without the converter, cloning answers as before and a neural clone says what is missing.

use crate::common;

use common::cloning::{clone, reference, speak};
use common::{Server, KEY_A};
use serde_json::json;

fn start(data: &tempfile::TempDir, converter: bool) -> Server {
    let library = common::onnxruntime();
    let model = common::fixture("openvoice/model");
    let converter = if converter {
        model.to_str().unwrap()
    } else {
        ""
    };
    Server::start(
        data.path(),
        &[
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
            ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
            ("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap()),
            ("SAUTI__CLONE__CONVERTER", converter),
        ],
    )
}

/// The samples of a synthesis answer (`audio_base64`, a WAV).
fn samples(reply: &common::Reply) -> Vec<f32> {
    use base64::Engine as _;
    let wav = base64::engine::general_purpose::STANDARD
        .decode(reply.json()["audio_base64"].as_str().expect("audio"))
        .unwrap();
    sauti::audio::load_16k(&wav, &Default::default())
        .unwrap()
        .samples
}

fn rms(samples: &[f32]) -> f32 {
    (samples.iter().map(|s| s * s).sum::<f32>() / samples.len().max(1) as f32).sqrt()
}

#[test]
fn a_neural_clone_speaks_everywhere_names_its_converter_and_survives_a_restart() {
    let data = common::temp_dir();
    let (id, first);
    {
        let server = start(&data, true);
        let bytes = reference("low.wav");
        let reply = clone(
            &server,
            KEY_A,
            Some(("audio/wav", &bytes)),
            &[("name", "Juma")],
        );
        assert_eq!(
            reply.status,
            201,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        let voice = reply.json();
        assert_eq!(voice["method"], "neural", "{voice}");
        assert_eq!(voice["converter"], "openvoice-v2", "{voice}");
        id = voice["voice_id"].as_str().unwrap().to_string();
        let base = voice["base_voice"].as_str().unwrap().to_string();
        let listed = common::get(&server.url(&format!("/v1/voices/{id}")), Some(KEY_A)).json();
        assert_eq!(listed["status"], "active", "{listed}");
        assert!(
            listed["description"]
                .as_str()
                .unwrap()
                .contains("re-voiced by openvoice-v2"),
            "{listed}"
        );

        // Sync synthesis: speech, at the speaker's rate (near the base voice's length).
        let spoken = speak(&server, KEY_A, &id);
        assert_eq!(
            spoken.status,
            200,
            "{}",
            String::from_utf8_lossy(&spoken.body)
        );
        first = samples(&spoken);
        let own = speak(&server, KEY_A, &base);
        let (cloned, original) = (first.clone(), samples(&own));
        let ratio = cloned.len() as f32 / original.len() as f32;
        assert!(
            (0.6..1.6).contains(&ratio),
            "{} against {}",
            cloned.len(),
            original.len()
        );
        assert!(rms(&cloned) > 1e-3, "the converted voice says something");

        // A stream, a job and an agent turn with the same voice.
        let stream = common::post_json(
            &server.url(&format!("/v1/text-to-speech/{id}/stream")),
            Some(KEY_A),
            &json!({"text": "Habari za asubuhi. Karibu sana, rafiki yangu."}),
        );
        assert_eq!(
            stream.status,
            200,
            "{}",
            String::from_utf8_lossy(&stream.body)
        );
        assert!(stream.body.len() > 4_000);
        let job = common::post_json(
            &server.url("/v1/tts/jobs"),
            Some(KEY_A),
            &json!({"text": "Habari za jioni, rafiki.", "voice_id": id}),
        );
        assert_eq!(job.status, 202, "{}", String::from_utf8_lossy(&job.body));
        let job_id = job.json()["job_id"].as_str().unwrap().to_string();
        let done =
            common::wait_for_job(&server, KEY_A, &job_id, std::time::Duration::from_secs(60));
        assert_eq!(done["status"], "succeeded", "{done}");
        let turn = common::post_json(
            &server.url("/v1/voice-agent/converse"),
            Some(KEY_A),
            &json!({"text": "Habari", "voice_id": id}),
        );
        assert_eq!(turn.status, 200, "{}", String::from_utf8_lossy(&turn.body));
        assert!(turn.json()["audio_base64"]
            .as_str()
            .is_some_and(|a| a.len() > 1_000));
    }

    // Restarted, the voice is rebuilt from its stored profile and says the same text the same way.
    let server = start(&data, true);
    let again = speak(&server, KEY_A, &id);
    assert_eq!(again.status, 200);
    assert_eq!(samples(&again), first, "the same voice after a restart");
    drop(server);

    // Without the converter the voice says what it needs; new clones are made by signal processing.
    let server = start(&data, false);
    let listed = common::get(&server.url(&format!("/v1/voices/{id}")), Some(KEY_A)).json();
    assert_eq!(listed["status"], "inactive", "{listed}");
    assert!(
        listed["status_detail"]
            .as_str()
            .unwrap()
            .contains("openvoice-v2"),
        "{listed}"
    );
    let bytes = reference("low.wav");
    let reply = clone(&server, KEY_A, Some(("audio/wav", &bytes)), &[]);
    assert_eq!(reply.status, 201);
    let made = reply.json();
    assert_ne!(made["method"], "neural");
    assert!(made.get("converter").is_none(), "{made}");
}
