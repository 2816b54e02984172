//! References that cannot make a good voice, black-box: too short, clipped, two speakers taking turns, music,
//! heavy noise each get a 422 naming the problem; marginal noise makes the voice with a warning.

use crate::common;

use common::cloning::{clone, reference, start};
use common::KEY_A;

fn decoded(name: &str) -> Vec<f32> {
    sauti::audio::load_16k(&reference(name), &Default::default())
        .unwrap()
        .samples
}

/// The problem detail of a refused reference (after checking it is a 422 problem).
fn refused(server: &common::Server, samples: &[f32]) -> String {
    let wav = sauti::audio::encode_wav_16k(samples);
    let reply = clone(server, KEY_A, Some(("audio/wav", &wav)), &[]);
    let problem = common::problem_body(&reply, 422);
    problem["detail"].as_str().unwrap().to_string()
}

/// Deterministic white noise at `snr_db` below the speech's level.
fn with_noise(clean: &[f32], snr_db: f32) -> Vec<f32> {
    let loud: Vec<f32> = clean.iter().copied().filter(|s| s.abs() > 1e-3).collect();
    let rms = (loud.iter().map(|s| s * s).sum::<f32>() / loud.len() as f32).sqrt();
    let scale = rms / 10f32.powf(snr_db / 20.0) * 3f32.sqrt();
    let mut state = 0x9e37_79b9_u32;
    clean
        .iter()
        .map(|s| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            s + (state as f32 / u32::MAX as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

#[test]
fn bad_references_are_refused_naming_the_problem_and_marginal_ones_warned() {
    let data = common::temp_dir();
    let server = start(&data, &[]);
    let (low, high) = (decoded("low.wav"), decoded("high.mp3"));

    let short = &low[..low.len().min(2 * 16_000)];
    assert!(refused(&server, short).contains("at least 3 s"));

    let peak = low.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    let clipped: Vec<f32> = low
        .iter()
        .map(|s| (s / peak * 6.0).clamp(-1.0, 1.0))
        .collect();
    assert!(refused(&server, &clipped).contains("clipped"));

    // Two speakers taking turns: two seconds each, with a pause between.
    let mut both = Vec::new();
    for turn in 0..6 {
        let voice = if turn % 2 == 0 { &low } else { &high };
        let start = (turn / 2) * 32_000 + 8_000;
        both.extend_from_slice(&voice[start.min(voice.len())..(start + 32_000).min(voice.len())]);
        both.extend(vec![0.0; 6_400]);
    }
    assert!(refused(&server, &both).contains("more than one speaker"));

    // A melody: held notes with their harmonics.
    let mut melody = Vec::new();
    for (i, f) in [196.0f32, 220.0, 247.0, 262.0, 294.0, 330.0, 349.0, 392.0]
        .iter()
        .cycle()
        .take(20)
        .enumerate()
    {
        for n in 0..8_000 {
            let t = n as f32 / 16_000.0;
            let tone: f32 = (1..=4)
                .map(|h| (std::f32::consts::TAU * f * h as f32 * t).sin() / h as f32)
                .sum();
            melody.push(
                0.15 * tone * (n as f32 / 300.0).min(1.0) * if i % 4 == 3 { 0.6 } else { 1.0 },
            );
        }
        melody.extend(vec![0.0; 1_600]);
    }
    assert!(refused(&server, &melody).contains("music"));

    assert!(refused(&server, &with_noise(&low, 2.0)).contains("too noisy"));
    let wav = sauti::audio::encode_wav_16k(&with_noise(&low, 15.0));
    let reply = clone(&server, KEY_A, Some(("audio/wav", &wav)), &[]);
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let warnings = reply.json()["warnings"].clone();
    assert!(warnings.to_string().contains("noisy"), "{warnings}");

    // The clean recording itself: a voice, no warnings.
    let wav = sauti::audio::encode_wav_16k(&low);
    let reply = clone(&server, KEY_A, Some(("audio/wav", &wav)), &[]);
    assert_eq!(reply.status, 201);
    assert!(reply.json().get("warnings").is_none(), "{}", reply.json());
}
