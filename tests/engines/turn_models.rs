//! The turn-taking models through sauti against their reference implementations, on the committed clips of
//! `tools/make_turn_fixtures.py`: Silero VAD's speech probabilities against the `silero-vad` package's, and
//! Smart Turn's end-of-turn probabilities against Pipecat's `LocalSmartTurnAnalyzerV3`. The models are the
//! real ones, installed through the catalog from the Pipecat wheel's files.

use crate::common;

use sauti::models::ModelSettings;
use sauti::turns::silero::{Silero, CHUNK};
use sauti::turns::smart_turn::SmartTurn;

fn settings() -> ModelSettings {
    ModelSettings {
        onnxruntime: common::onnxruntime(),
        ..ModelSettings::default()
    }
}

fn clip(name: &str) -> Vec<f32> {
    let bytes = std::fs::read(common::fixture(&format!("turns/{name}.wav"))).unwrap();
    let decoded = sauti::audio::load_16k(&bytes, &Default::default()).unwrap();
    decoded.samples
}

fn reference(file: &str) -> serde_json::Map<String, serde_json::Value> {
    let text = std::fs::read_to_string(common::fixture(&format!("turns/{file}"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn silero_gives_the_silero_vad_package_s_probabilities() {
    let models = common::sdk::turn_models();
    let silero = Silero::load(&models.join("silero-vad"), &settings()).unwrap();
    let expected = reference("silero.json");
    assert_eq!(expected.len(), 3);
    for (name, probabilities) in &expected {
        let samples = clip(name);
        let mut stream = silero.stream();
        let mut worst = 0f32;
        let mut speech = 0;
        for (chunk, theirs) in samples
            .chunks_exact(CHUNK)
            .zip(probabilities.as_array().unwrap())
        {
            let ours = stream.probability(chunk, &silero).unwrap();
            let theirs = theirs.as_f64().unwrap() as f32;
            worst = worst.max((ours - theirs).abs());
            speech += usize::from(ours > 0.5);
        }
        assert!(worst < 1e-4, "{name}: differs by {worst}");
        // The clips hold speech between stretches of line noise: the model hears both.
        let chunks = samples.len() / CHUNK;
        assert!(
            (chunks / 5..chunks * 4 / 5).contains(&speech),
            "{name}: {speech} of {chunks}"
        );
    }
}

#[test]
fn smart_turn_gives_pipecat_s_probabilities() {
    let models = common::sdk::turn_models();
    let model = SmartTurn::load(&models.join("smart-turn-v3"), &settings()).unwrap();
    let expected = reference("smart_turn.json");
    assert_eq!(expected.len(), 6);
    for (key, case) in &expected {
        let (name, _) = key.split_once('/').unwrap();
        let samples = clip(name);
        let length = case["samples"].as_u64().unwrap() as usize;
        let ours = model.complete(&samples[..length]).unwrap();
        let theirs = case["probability"].as_f64().unwrap() as f32;
        // Pipecat computes the spectrogram in double precision, sauti in single: the features differ by
        // about 1e-6, the probabilities by less than 1e-4.
        assert!(
            (ours - theirs).abs() < 1e-4,
            "{key}: {ours} against {theirs}"
        );
    }
}

#[test]
fn a_graph_that_is_not_the_model_is_refused_at_load() {
    let not_silero = SmartTurn::load(
        &common::sdk::turn_models().join("silero-vad/silero_vad.onnx"),
        &settings(),
    );
    assert!(not_silero
        .unwrap_err()
        .to_string()
        .contains("not a Smart Turn graph"));
    let speaker = Silero::load(&common::fixture("speaker/encoder.onnx"), &settings());
    assert!(speaker
        .unwrap_err()
        .to_string()
        .contains("not a Silero VAD graph"));
}
