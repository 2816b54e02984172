use super::*;
use crate::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

const TEXTS: [&str; 4] = [
    "Habari za asubuhi. Jina langu ni Amani na ninaishi Dar es Salaam.",
    "Leo ninataka kuzungumza kuhusu kilimo cha mahindi na maharage.",
    "Mvua ilinyesha sana jana usiku, lakini leo jua linawaka.",
    "Tafadhali nipigie simu kesho jioni baada ya kazi.",
];

/// One voice reading the texts with half a second between them.
fn speech(voice: &EmbeddedVoice) -> Vec<f32> {
    let mut out = vec![0.0; 8_000];
    for text in TEXTS {
        out.extend(voice.synthesize(text, &VoiceSettings::default()).unwrap());
        out.extend(vec![0.0; 8_000]);
    }
    out
}

/// Deterministic white noise at `snr_db` below the speech's RMS.
fn noisy(clean: &[f32], snr_db: f32) -> Vec<f32> {
    let voiced: Vec<f32> = clean.iter().copied().filter(|s| s.abs() > 1e-4).collect();
    let rms = (voiced.iter().map(|s| s * s).sum::<f32>() / voiced.len() as f32).sqrt();
    let scale = rms / 10f32.powf(snr_db / 20.0) * 3f32.sqrt();
    let mut state = 0x2545_f491_u32;
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

/// Notes of a melody (a tone and its harmonics), 400 ms each with 50 ms between.
fn music() -> Vec<f32> {
    let notes = [262.0, 294.0, 330.0, 349.0, 392.0, 440.0, 494.0, 523.0];
    let mut out = Vec::new();
    for round in 0..3 {
        for (i, f) in notes.iter().enumerate() {
            let f = f * if (round + i) % 2 == 0 { 1.0 } else { 0.75 };
            for n in 0..6_400 {
                let t = n as f32 / 16_000.0;
                let envelope = (n as f32 / 400.0).min(1.0) * (1.0 - n as f32 / 6_400.0 * 0.5);
                let tone: f32 = (1..=5)
                    .map(|h| (2.0 * std::f32::consts::PI * f * h as f32 * t).sin() / h as f32)
                    .sum();
                out.push(0.2 * envelope * tone);
            }
            out.extend(vec![0.0; 800]);
        }
    }
    out
}

#[test]
fn clean_speech_of_one_voice_passes_without_warnings() {
    for voice in [EmbeddedVoice::zuri(), EmbeddedVoice::baraka()] {
        assert_eq!(check(&speech(&voice)), Ok(vec![]));
    }
}

#[test]
fn clipped_speech_is_refused_and_a_few_clipped_peaks_are_a_warning() {
    let loud: Vec<f32> = speech(&EmbeddedVoice::zuri())
        .iter()
        .map(|s| (s * 8.0).clamp(-1.0, 1.0))
        .collect();
    assert!(matches!(check(&loud), Err(Unfit::Clipped { percent }) if percent > 1.0));
    let clean = speech(&EmbeddedVoice::baraka());
    let peak = clean.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    let mut touched: Vec<f32> = clean.iter().map(|s| s / peak * 0.9).collect();
    // A few short runs at full scale: 0.3% of the speech.
    let speechy: Vec<usize> = (0..touched.len())
        .filter(|&i| touched[i].abs() > 0.3)
        .collect();
    for &i in speechy.iter().step_by(speechy.len() / 40).take(40) {
        for k in i..(i + 12).min(touched.len()) {
            touched[k] = 1.0;
        }
    }
    let warnings = check(&touched).unwrap();
    assert!(
        warnings.iter().any(|w| w.contains("clipped")),
        "{warnings:?}"
    );
}

#[test]
fn noise_is_refused_when_heavy_and_a_warning_when_marginal() {
    let clean = speech(&EmbeddedVoice::zuri());
    assert!(matches!(
        check(&noisy(&clean, 3.0)),
        Err(Unfit::Noisy { .. })
    ));
    let warnings = check(&noisy(&clean, 15.0)).unwrap();
    assert!(warnings.iter().any(|w| w.contains("noisy")), "{warnings:?}");
    assert_eq!(check(&noisy(&clean, 35.0)), Ok(vec![]));
}

#[test]
fn two_voices_taking_turns_are_refused() {
    let (zuri, baraka) = (EmbeddedVoice::zuri(), EmbeddedVoice::baraka());
    let mut both = vec![0.0; 8_000];
    for (i, text) in TEXTS.iter().enumerate() {
        let voice = if i % 2 == 0 { &zuri } else { &baraka };
        both.extend(voice.synthesize(text, &VoiceSettings::default()).unwrap());
        both.extend(vec![0.0; 8_000]);
    }
    match check(&both) {
        Err(Unfit::Speakers { low, high }) => assert!(high / low > 1.45, "{low} {high}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn music_is_refused() {
    match check(&music()) {
        Err(Unfit::Music { percent }) => assert!(percent > 50.0),
        other => panic!("{other:?}"),
    }
}
