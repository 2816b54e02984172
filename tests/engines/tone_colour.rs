//! Tone-colour conversion against coqui-tts's OpenVoice implementation (`tools/make_openvoice_fixtures.py`: V2's
//! architecture with random weights, narrow channels): the spectrogram, the reference encoder's tone colour and
//! the converter's waveform, from the committed 22,050 Hz clips, through the real ONNX Runtime library.

use crate::common;

use sauti::clone::tone::ToneConverter;
use sauti::models::{ModelError, ModelSettings};
use serde::Deserialize;

#[derive(Deserialize)]
struct Reference {
    clips: Vec<Clip>,
    conversions: Vec<Conversion>,
}

#[derive(Deserialize)]
struct Clip {
    audio: String,
    frames: usize,
    spectrogram: String,
    tone: Vec<f32>,
}

#[derive(Deserialize)]
struct Conversion {
    source: String,
    target: String,
    noise: String,
    waveform: String,
    samples: usize,
}

fn reference() -> Reference {
    let text = std::fs::read_to_string(common::fixture("openvoice/reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(name: &str) -> Vec<f32> {
    std::fs::read(common::fixture("openvoice").join(name))
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

/// The clip's samples as written (22,050 Hz PCM16, not resampled).
fn clip(name: &str) -> Vec<f32> {
    let mut reader = hound::WavReader::open(common::fixture("openvoice").join(name)).unwrap();
    assert_eq!(reader.spec().sample_rate, 22_050);
    reader
        .samples::<i16>()
        .map(|s| f32::from(s.unwrap()) / 32768.0)
        .collect()
}

fn load() -> ToneConverter {
    let settings = ModelSettings {
        onnxruntime: common::onnxruntime(),
        ..ModelSettings::default()
    };
    ToneConverter::load(&common::fixture("openvoice/model"), &settings, 2)
        .unwrap_or_else(|e| panic!("{e}"))
}

fn worst(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn spectrogram_and_tone_colour_match_coqui_tts() {
    let model = load();
    let reference = reference();
    assert_eq!(reference.clips.len(), 2);
    for expected in &reference.clips {
        let samples = clip(&expected.audio);
        let (spec, frames) = model.spectrogram(&samples);
        assert_eq!(frames, expected.frames, "{}", expected.audio);
        let theirs = floats(&expected.spectrogram);
        // Relative to the magnitude: loud bins reach the hundreds.
        let off = spec
            .iter()
            .zip(&theirs)
            .map(|(a, b)| (a - b).abs() / b.abs().max(1.0))
            .fold(0.0, f32::max);
        assert!(off < 1e-5, "{}: spectrogram off by {off}", expected.audio);
        let tone = model.tone(&samples).unwrap();
        let off = worst(&tone, &expected.tone);
        assert!(off < 1e-5, "{}: tone colour off by {off}", expected.audio);
    }
    let [a, b] = [0, 1].map(|i| &reference.clips[i].tone);
    assert!(worst(a, b) > 1e-3, "two speakers, two tone colours");
}

#[test]
fn conversion_matches_coqui_tts_with_the_same_noise() {
    let model = load();
    let reference = reference();
    let tone = |name: &str| model.tone(&clip(name)).unwrap();
    for case in &reference.conversions {
        let (spec, frames) = model.spectrogram(&clip(&case.source));
        let noise = floats(&case.noise);
        let waveform = model
            .convert_spectrogram(
                spec,
                frames,
                noise,
                &tone(&case.source),
                &tone(&case.target),
            )
            .unwrap();
        assert_eq!(waveform.len(), case.samples);
        assert_eq!(waveform.len(), frames * model.settings().hop_length);
        let expected = floats(&case.waveform);
        let off = worst(&waveform, &expected);
        assert!(
            off < 1e-4,
            "{} as {}: off by {off}",
            case.source,
            case.target
        );
        assert!(
            expected.iter().any(|s| s.abs() > 1e-3),
            "the reference says something"
        );
    }
}

#[test]
fn a_conversion_is_reproducible_from_its_seed_and_the_target_changes_it() {
    let model = load();
    let (a, b) = (clip("espeak.wav"), clip("other.wav"));
    let (ta, tb) = (model.tone(&a).unwrap(), model.tone(&b).unwrap());
    let once = model.convert(&a, &ta, &tb, 7).unwrap();
    assert_eq!(once, model.convert(&a, &ta, &tb, 7).unwrap());
    assert_ne!(
        once,
        model.convert(&a, &ta, &tb, 8).unwrap(),
        "another draw"
    );
    // The random fixture's two speakers are near each other; a tone colour far from both moves the output.
    let far: Vec<f32> = ta.iter().map(|x| -5.0 * x).collect();
    let other = model.convert(&a, &ta, &far, 7).unwrap();
    let loudest = once.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    assert!(
        worst(&once, &other) > 0.01 * loudest,
        "the target tone colour matters"
    );
    assert_eq!(once.len(), (a.len() / 256) * 256);
    assert!(model.convert(&a[..300], &ta, &tb, 7).unwrap().is_empty());
    assert!(model.tone(&a[..300]).is_err());
    assert!(model.convert(&a, &ta[..10], &tb, 7).is_err());
}

#[test]
fn missing_files_are_named() {
    let dir = common::temp_dir();
    for file in ["tone_encoder.onnx", "converter.onnx"] {
        std::fs::copy(
            common::fixture("openvoice/model").join(file),
            dir.path().join(file),
        )
        .unwrap();
    }
    let settings = ModelSettings {
        onnxruntime: common::onnxruntime(),
        ..ModelSettings::default()
    };
    match ToneConverter::load(dir.path(), &settings, 1) {
        Err(ModelError::Missing { path }) => assert!(path.ends_with("openvoice.json")),
        Err(other) => panic!("{other}"),
        Ok(_) => panic!("loaded without openvoice.json"),
    }
}
