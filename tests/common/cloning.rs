//! Helpers of the voice-cloning tests: forms, the reference clips of `tools/make_clone_fixtures.sh`, a server
//! with raised limits, and cloning then speaking with the result.

use base64::Engine as _;
use serde_json::json;

use super::{Reply, Server, KEY_A};

pub const BOUNDARY: &str = "sauti-clone-boundary-51c2";

pub fn form(audio: Option<(&str, &[u8])>, fields: &[(&str, &str)]) -> Vec<u8> {
    let mut body = Vec::new();
    if let Some((media, bytes)) = audio {
        body.extend_from_slice(
            format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"audio\"; filename=\"reference\"\r\nContent-Type: {media}\r\n\r\n"
            )
            .as_bytes(),
        );
        body.extend_from_slice(bytes);
        body.extend_from_slice(b"\r\n");
    }
    for (name, value) in fields {
        body.extend_from_slice(
            format!("--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                .as_bytes(),
        );
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    body
}

pub fn clone(
    server: &Server,
    key: &str,
    audio: Option<(&str, &[u8])>,
    fields: &[(&str, &str)],
) -> Reply {
    super::post_raw(
        &server.url("/v1/voice-clone/"),
        Some(key),
        &format!("multipart/form-data; boundary={BOUNDARY}"),
        &form(audio, fields),
    )
}

pub fn reference(name: &str) -> Vec<u8> {
    std::fs::read(super::fixture(&format!("clone/{name}"))).unwrap()
}

pub fn median_f0(samples: &[f32]) -> f32 {
    sauti::audio::pitch::quantile(&sauti::audio::pitch::track(samples, 16_000), 0.5).unwrap()
}

pub fn speak(server: &Server, key: &str, voice: &str) -> Reply {
    super::post_json(
        &server.url(&format!("/v1/text-to-speech/{voice}")),
        Some(key),
        &json!({"text": "Habari za asubuhi. Karibu sana, rafiki yangu, tutaonana kesho jioni."}),
    )
}

pub fn start(data: &tempfile::TempDir, extra: &[(&str, &str)]) -> Server {
    let mut env = vec![
        ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "1000"),
        ("SAUTI__LIMITS__SYNTHESIS_PER_MINUTE", "1000"),
    ];
    env.extend_from_slice(extra);
    Server::start(data.path(), &env)
}

/// What cloning a reference and speaking with the new voice gave.
pub struct Spoken {
    /// The 201 response.
    pub reply: Reply,
    /// Its body.
    pub voice: serde_json::Value,
    /// The synthesised WAV.
    pub wav: Vec<u8>,
    /// Median F0 of the clone's speech, Hz.
    pub clone_f0: f32,
    /// Median F0 of the reference, Hz.
    pub reference_f0: f32,
}

/// Clone `file` with the form `fields`, then speak with the voice; both must succeed.
pub fn clone_and_speak(
    server: &Server,
    file: &str,
    media: &str,
    fields: &[(&str, &str)],
) -> Spoken {
    let bytes = reference(file);
    let reply = clone(server, KEY_A, Some((media, &bytes)), fields);
    assert_eq!(
        reply.status,
        201,
        "{file}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    let voice = reply.json();
    let spoken = speak(server, KEY_A, voice["voice_id"].as_str().unwrap());
    assert_eq!(
        spoken.status,
        200,
        "{}",
        String::from_utf8_lossy(&spoken.body)
    );
    let wav = base64::engine::general_purpose::STANDARD
        .decode(spoken.json()["audio_base64"].as_str().unwrap())
        .unwrap();
    let f0 = |bytes: &[u8]| {
        median_f0(
            &sauti::audio::load_16k(bytes, &Default::default())
                .unwrap()
                .samples,
        )
    };
    Spoken {
        clone_f0: f0(&wav),
        reference_f0: f0(&bytes),
        reply,
        voice,
        wav,
    }
}
