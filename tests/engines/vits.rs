//! Neural voices against the reference of `tools/make_vits_fixtures.py`: tiny random-weight transformers
//! `VitsModel`s exported in the MMS-TTS and Piper layouts, with the token ids and waveforms transformers produced
//! (noise scales 0). Runs through the real ONNX Runtime library from PyPI.

use crate::common;

use std::path::PathBuf;

use sauti::models::{ModelError, ModelSettings};
use sauti::tts::lexicon::Lexicon;
use sauti::tts::vits::{Layout, VitsOptions, VitsVoice};
use sauti::tts::{Synthesizer, TtsError, VoiceSettings};
use serde::Deserialize;

/// Largest sample difference allowed between transformers (PyTorch) and our ONNX Runtime run. The Python
/// ONNX Runtime session differs from transformers by at most 4.4e-5 on these fixtures; float reordering in the
/// optimised graph stays well inside this bound.
const WAVEFORM_TOLERANCE: f32 = 1e-4;

#[derive(Debug, Deserialize)]
struct Reference {
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    layout: String,
    text: String,
    #[serde(default)]
    ipa: Option<String>,
    ids: Vec<i64>,
    speaking_rate: f32,
    speaker: i64,
    sample_rate: u32,
    waveform: String,
}

fn reference() -> Vec<Case> {
    let text = std::fs::read_to_string(common::fixture("vits/reference.json")).unwrap();
    serde_json::from_str::<Reference>(&text).unwrap().cases
}

fn waveform(name: &str) -> Vec<f32> {
    std::fs::read(common::fixture(&format!("vits/{name}")))
        .unwrap()
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

fn options(speaker: i64) -> VitsOptions {
    VitsOptions {
        speaker,
        sessions: 2,
        models: ModelSettings {
            onnxruntime: common::onnxruntime(),
            ..ModelSettings::default()
        },
        lexicon: Lexicon::embedded().clone(),
    }
}

fn model(layout: &str) -> PathBuf {
    match layout {
        "mms" => common::fixture("vits/mms"),
        _ => common::fixture("vits/piper/sw-tiny.onnx"),
    }
}

/// The MMS fixture with its whole graph only (without `model.prior.onnx` and `model.decoder.onnx`), in `dir`.
fn mms_whole_graph(dir: &tempfile::TempDir) -> PathBuf {
    for entry in std::fs::read_dir(common::fixture("vits/mms")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.ends_with(".prior.onnx") && !name.ends_with(".decoder.onnx") {
            std::fs::copy(&path, dir.path().join(name)).unwrap();
        }
    }
    dir.path().to_path_buf()
}

fn silent(speaking_rate: f32) -> VoiceSettings {
    VoiceSettings {
        speaking_rate,
        noise_scale: 0.0,
        noise_scale_duration: 0.0,
    }
}

fn check_layout(layout: &str, expected: Layout, folder: PathBuf, split: bool) {
    let cases: Vec<Case> = reference()
        .into_iter()
        .filter(|c| c.layout == layout)
        .collect();
    assert!(cases.len() >= 6, "{layout}: {} cases", cases.len());
    for case in cases {
        let voice = VitsVoice::load(&folder, &options(case.speaker)).unwrap();
        assert_eq!(voice.layout(), expected);
        assert_eq!(voice.is_split(), split);
        assert_eq!(voice.sample_rate(), case.sample_rate);
        if let Some(ipa) = &case.ipa {
            assert_eq!(&voice.ipa(&case.text), ipa, "{:?}", case.text);
        }
        assert_eq!(voice.token_ids(&case.text), case.ids, "{:?}", case.text);
        let got = voice
            .run_ids(&case.ids, &silent(case.speaking_rate))
            .unwrap();
        let want = waveform(&case.waveform);
        assert_eq!(got.len(), want.len(), "{:?} length", case.text);
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst <= WAVEFORM_TOLERANCE,
            "{layout} {:?} at rate {}: max |diff| {worst:e}",
            case.text,
            case.speaking_rate
        );
        eprintln!(
            "{layout} {:?} rate {}: {} samples, max |diff| {worst:.1e}",
            case.text,
            case.speaking_rate,
            got.len()
        );
        let peak = want.iter().fold(0.0f32, |m, s| m.max(s.abs()));
        assert!(peak > 1e-3, "the reference is not silence ({peak})");
    }
}

#[test]
fn mms_layout_reproduces_transformers_token_ids_and_waveforms() {
    // The prior and decoder graphs one after the other, and the whole graph alone.
    check_layout("mms", Layout::Mms, model("mms"), true);
    let dir = common::temp_dir();
    check_layout("mms", Layout::Mms, mms_whole_graph(&dir), false);
}

#[test]
fn piper_layout_reproduces_espeak_phonemes_ids_and_waveforms() {
    check_layout("piper", Layout::Piper, model("piper"), false);
}

#[test]
fn whole_texts_are_16k_sentences_joined_by_pauses() {
    let voice = VitsVoice::load(&model("piper"), &options(0)).unwrap();
    let settings = silent(1.0);
    let one = voice.synthesize("Habari yako?", &settings).unwrap();
    let native = voice
        .run_ids(&voice.token_ids("Habari yako?"), &settings)
        .unwrap();
    let expected = (native.len() as u64 * 16_000 + 11_025) / 22_050;
    assert_eq!(one.len() as u64, expected, "resampled from 22.05 kHz");
    let two = voice
        .synthesize("Habari yako? Karibu sana, rafiki.", &settings)
        .unwrap();
    let second = voice.synthesize("Karibu sana, rafiki.", &settings).unwrap();
    assert_eq!(
        two.len(),
        one.len() + 3_200 + second.len(),
        "a 0.2 s pause between"
    );
    assert_eq!(&two[..one.len()], &one[..]);
    assert!(two[one.len()..one.len() + 3_200].iter().all(|&s| s == 0.0));

    // Faster speech is shorter; the noise settings change the audio.
    let fast = voice
        .synthesize("Karibu sana, rafiki.", &silent(2.0))
        .unwrap();
    assert!(
        fast.len() * 10 < second.len() * 7,
        "{} vs {}",
        fast.len(),
        second.len()
    );
    let lively = voice
        .synthesize("Karibu sana, rafiki.", &VoiceSettings::default())
        .unwrap();
    assert_ne!(lively, second);
}

#[test]
fn digits_are_read_as_words_and_unreadable_text_is_refused() {
    let voice = VitsVoice::load(&model("mms"), &options(0)).unwrap();
    assert_eq!(
        voice.token_ids("Nina shilingi 250."),
        voice.token_ids("nina shilingi mia mbili na hamsini")
    );
    let settings = VoiceSettings::default();
    assert_eq!(voice.synthesize("  ", &settings), Err(TtsError::EmptyText));
    assert_eq!(
        voice.synthesize("?! …", &settings),
        Err(TtsError::NothingToSay)
    );
    let out_of_range = VoiceSettings {
        speaking_rate: 9.0,
        ..settings
    };
    assert!(matches!(
        voice.synthesize("Habari", &out_of_range),
        Err(TtsError::SettingOutOfRange { .. })
    ));
}

#[test]
fn parallel_callers_share_the_sessions_and_agree() {
    let voice = std::sync::Arc::new(VitsVoice::load(&model("mms"), &options(0)).unwrap());
    let alone = voice
        .synthesize("Karibu Tanzania, rafiki yangu!", &silent(1.0))
        .unwrap();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let voice = std::sync::Arc::clone(&voice);
            std::thread::spawn(move || {
                voice
                    .synthesize("Karibu Tanzania, rafiki yangu!", &silent(1.0))
                    .unwrap()
            })
        })
        .collect();
    for handle in handles {
        assert_eq!(handle.join().unwrap(), alone);
    }
}

#[test]
fn broken_or_missing_models_say_what_is_wrong() {
    let missing = VitsVoice::load(&common::fixture("vits/nowhere"), &options(0));
    assert!(matches!(missing, Err(ModelError::Missing { .. })));
    let speaker = VitsVoice::load(&model("piper"), &options(5)).err().unwrap();
    assert!(
        speaker
            .to_string()
            .contains("speaker 5 is not one of its 2 speakers"),
        "{speaker}"
    );
    let dir = common::temp_dir();
    std::fs::write(dir.path().join("model.onnx"), b"not a graph").unwrap();
    std::fs::copy(
        common::fixture("vits/mms/vocab.json"),
        dir.path().join("vocab.json"),
    )
    .unwrap();
    let broken = VitsVoice::load(dir.path(), &options(0)).err().unwrap();
    assert!(matches!(broken, ModelError::Invalid { .. }), "{broken}");
}
