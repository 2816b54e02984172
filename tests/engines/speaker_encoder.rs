//! The speaker encoder's front end and graph against `tools/make_speaker_fixtures.py`: torchaudio's Kaldi
//! `fbank` (as WeSpeaker computes it) and a tiny random-weight encoder run by ONNX Runtime in Python.

use crate::common;

use sauti::clone::speaker::{cosine, fbank, SpeakerEncoder};
use sauti::models::ModelSettings;

fn reference() -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(common::fixture("speaker/reference.json")).unwrap(),
    )
    .unwrap()
}

fn clip() -> Vec<f32> {
    let bytes = std::fs::read(common::fixture("clone/low.wav")).unwrap();
    let mut samples = sauti::audio::load_16k(&bytes, &Default::default())
        .unwrap()
        .samples;
    samples.truncate(3 * 16_000);
    samples
}

#[test]
fn filter_banks_match_kaldi_as_torchaudio_computes_them() {
    let theirs: Vec<f32> = std::fs::read(common::fixture("speaker/low-fbank.f32"))
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let ours = fbank(&clip());
    assert_eq!(ours.len(), theirs.len());
    assert_eq!(
        ours.len() / 80,
        reference()["frames"].as_u64().unwrap() as usize
    );
    // Both sides compute in f32: in the lowest filters (20-200 Hz) of quiet frames the energies sit near the
    // FFT's rounding noise, so the logs differ by a few 1e-3 there; everywhere else they agree to 1e-3.
    let mut worst = [0f32; 2];
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let band = usize::from(i % 80 >= 8);
        worst[band] = worst[band].max((a - b).abs());
    }
    eprintln!(
        "fbank max |diff|: {:.1e} (filters 0-7), {:.1e} (8-79)",
        worst[0], worst[1]
    );
    assert!(worst[0] < 1e-2 && worst[1] < 1e-3, "max |diff| {worst:?}");
}

#[test]
fn the_encoder_reproduces_the_reference_embedding() {
    let settings = ModelSettings {
        onnxruntime: common::onnxruntime(),
        ..ModelSettings::default()
    };
    let encoder = SpeakerEncoder::load(&common::fixture("speaker"), &settings).unwrap();
    let ours = encoder.embed(&clip()).unwrap();
    let theirs: Vec<f32> = reference()["embedding"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() as f32)
        .collect();
    assert_eq!(ours.len(), theirs.len());
    assert!(cosine(&ours, &theirs) > 0.9999, "{ours:?} vs {theirs:?}");
    let missing = SpeakerEncoder::load(&common::fixture("speaker/none.onnx"), &settings);
    assert!(missing.err().unwrap().to_string().contains("missing"));
}
