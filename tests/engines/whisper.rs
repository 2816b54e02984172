//! Speech recognition against the reference of `tools/make_whisper_fixtures.py`: a tiny random-weight
//! transformers `WhisperForConditionalGeneration` exported in optimum's layouts, with transformers' log-mel
//! features and the token ids of `generate()`. Runs through the real ONNX Runtime library from PyPI.

use crate::common;

use std::path::{Path, PathBuf};

use sauti::asr::mel::{LogMel, FRAMES};
use sauti::asr::whisper::{Whisper, WhisperOptions};
use sauti::asr::{AsrError, Hints, Recognizer, Task, WordTiming};
use sauti::cancel::Cancel;
use sauti::models::ModelSettings;
use serde::Deserialize;

/// Largest feature difference allowed from transformers' `WhisperFeatureExtractor` (the bound).
const FEATURE_TOLERANCE: f32 = 1e-4;

#[derive(Debug, Deserialize)]
struct Reference {
    features: Vec<Features>,
    transcripts: Vec<Expected>,
    max_new_tokens: usize,
    timed: Vec<Timed>,
    prompted: Vec<Prompted>,
}

#[derive(Debug, Deserialize)]
struct Timed {
    audio: String,
    language: String,
    tokens: Vec<u32>,
}

#[derive(Debug, Deserialize)]
struct Prompted {
    audio: String,
    language: String,
    before: String,
    prompt: Vec<u32>,
    tokens: Vec<u32>,
}

#[derive(Debug, Deserialize)]
struct Features {
    audio: String,
    bins: usize,
    frames: usize,
    file: String,
    floor: Option<f32>,
}

#[derive(Debug, Deserialize)]
struct Expected {
    audio: String,
    language: String,
    prompt: Vec<u32>,
    tokens: Vec<u32>,
    text: String,
}

/// `task` without timestamps (the decoding the plain references were made with).
fn plain(model: &Whisper, samples: &[f32], language: &str, task: Task) -> sauti::asr::Transcript {
    let hints = Hints {
        timed: false,
        ..Hints::default()
    };
    model
        .recognise(samples, language, task, &hints, &Cancel::new())
        .unwrap()
}

fn reference() -> Reference {
    let text = std::fs::read_to_string(common::fixture("whisper/reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn samples(name: &str) -> Vec<f32> {
    let bytes = std::fs::read(common::fixture(&format!("whisper/{name}"))).unwrap();
    sauti::audio::load_16k(&bytes, &Default::default())
        .unwrap()
        .samples
}

/// A copy of the fixture model with only the decoder graphs of one layout.
fn model_copy(layout: &str) -> tempfile::TempDir {
    let dir = common::temp_dir();
    let source = common::fixture("whisper/model");
    for entry in std::fs::read_dir(&source).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        let keep = match name.as_str() {
            "decoder_model_merged.onnx" => layout == "merged",
            "decoder_model.onnx" | "decoder_with_past_model.onnx" => layout == "split",
            _ => true,
        };
        if keep {
            std::fs::copy(source.join(&name), dir.path().join(&name)).unwrap();
        }
    }
    dir
}

fn load(dir: &Path, max_new_tokens: usize) -> Whisper {
    let options = WhisperOptions {
        sessions: 2,
        models: ModelSettings {
            onnxruntime: common::onnxruntime(),
            ..ModelSettings::default()
        },
        max_new_tokens,
        variant: String::new(),
    };
    Whisper::load(dir, &options).unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
}

#[test]
fn log_mel_features_match_the_transformers_extractor() {
    let reference = reference();
    assert!(reference.features.iter().any(|f| f.bins == 128));
    for expected in &reference.features {
        let ours = LogMel::new(expected.bins).features(&samples(&expected.audio));
        assert_eq!(ours.len(), expected.bins * FRAMES);
        let theirs = common::floats(&common::fixture(&format!("whisper/{}", expected.file)));
        assert_eq!(theirs.len(), expected.bins * expected.frames);
        let mut worst = 0f32;
        for bin in 0..expected.bins {
            for frame in 0..FRAMES {
                let want = if frame < expected.frames {
                    theirs[bin * expected.frames + frame]
                } else {
                    expected.floor.expect("a floor for the padding")
                };
                worst = worst.max((ours[bin * FRAMES + frame] - want).abs());
            }
        }
        eprintln!(
            "{} ({} bins): max |diff| {worst:.2e}",
            expected.audio, expected.bins
        );
        assert!(
            worst <= FEATURE_TOLERANCE,
            "{} ({} bins): max |diff| {worst}",
            expected.audio,
            expected.bins
        );
    }
}

#[test]
fn greedy_decoding_reproduces_generate_in_both_layouts() {
    let reference = reference();
    for layout in ["split", "merged"] {
        let dir = model_copy(layout);
        let model = load(dir.path(), reference.max_new_tokens);
        for expected in &reference.transcripts {
            assert_eq!(model.prompt(&expected.language).unwrap(), expected.prompt);
            let tokens = model
                .decode_window(&samples(&expected.audio), &expected.language)
                .unwrap();
            assert_eq!(
                tokens, expected.tokens,
                "{layout}: {} in {}",
                expected.audio, expected.language
            );
            assert_eq!(model.text(&tokens).unwrap(), expected.text.trim());
        }
    }
}

#[test]
fn transcripts_join_windows_and_silence_gives_none() {
    let reference = reference();
    let model = load(&common::fixture("whisper/model"), reference.max_new_tokens);
    // The voiced fixture is speech to the detector: one window, the whole clip, the reference text.
    let speech = samples("speech.wav");
    let expected = reference
        .transcripts
        .iter()
        .find(|t| t.audio == "speech.wav" && t.language == "sw")
        .unwrap();
    let transcript = plain(&model, &speech, "sw", Task::Transcribe);
    assert_eq!(transcript.text, expected.text.trim());
    assert_eq!(
        transcript.segments.len(),
        usize::from(!transcript.text.is_empty())
    );

    // Silence is not decoded at all: no hallucinated text.
    let silence = model.transcribe(&vec![0.0; 16_000 * 40], "sw").unwrap();
    assert_eq!(silence.text, "");
    assert!(silence.segments.is_empty());

    // 70 s: three bursts of the clip separated by long pauses become windows of at most 30 s each.
    let mut long = Vec::new();
    for _ in 0..3 {
        long.extend(vec![0.0f32; 16_000 * 20]);
        long.extend_from_slice(&speech);
    }
    let transcript = model.transcribe(&long, "sw").unwrap();
    assert!(transcript.segments.len() >= 2, "{transcript:?}");
    assert!(transcript
        .segments
        .iter()
        .all(|s| s.end - s.start <= 30.0 + 1e-9 && s.end <= long.len() as f64 / 16_000.0));
    let joined: Vec<&str> = transcript
        .segments
        .iter()
        .map(|s| s.text.as_str())
        .collect();
    assert_eq!(transcript.text, joined.join(" "));
}

#[test]
fn translation_asks_for_the_translate_task_in_the_same_windows() {
    let reference = reference();
    let model = load(&common::fixture("whisper/model"), reference.max_new_tokens);
    let transcribe = model.prompt_for("sw", Task::Transcribe).unwrap();
    let translate = model.prompt_for("sw", Task::Translate).unwrap();
    // Only the task token differs: <|transcribe|> (422 in this tokenizer) against <|translate|> (421).
    assert_eq!(transcribe.len(), translate.len());
    let differing: Vec<(u32, u32)> = transcribe
        .iter()
        .zip(&translate)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| (*a, *b))
        .collect();
    assert_eq!(differing, [(422, 421)]);
    let speech = samples("speech.wav");
    let cancel = sauti::cancel::Cancel::new();
    let english = plain(&model, &speech, "sw", Task::Translate);
    let spoken = plain(&model, &speech, "sw", Task::Transcribe);
    let bounds = |t: &sauti::asr::Transcript| -> Vec<(f64, f64)> {
        t.segments.iter().map(|s| (s.start, s.end)).collect()
    };
    // The same windows (the detector's), whatever the decoder writes in them.
    assert_eq!(
        bounds(&english).len(),
        usize::from(!english.text.is_empty())
    );
    assert!(english.words.is_empty());
    if !english.text.is_empty() && !spoken.text.is_empty() {
        assert_eq!(bounds(&english), bounds(&spoken));
    }
    assert_eq!(
        model.translate_until(&speech, "xx", &cancel).unwrap_err(),
        AsrError::UnsupportedLanguage("xx".into())
    );
}

#[test]
fn languages_the_model_lacks_are_refused_and_missing_files_are_named() {
    let model = load(&common::fixture("whisper/model"), 4);
    assert_eq!(
        model.transcribe(&[0.0; 1600], "xx").unwrap_err(),
        AsrError::UnsupportedLanguage("xx".into())
    );
    let empty = common::temp_dir();
    let options = WhisperOptions {
        sessions: 1,
        models: ModelSettings {
            onnxruntime: common::onnxruntime(),
            ..ModelSettings::default()
        },
        max_new_tokens: 4,
        variant: String::new(),
    };
    let error = Whisper::load(&PathBuf::from(empty.path()), &options)
        .err()
        .expect("no model");
    assert!(error.to_string().contains("encoder_model.onnx"), "{error}");
}

#[test]
fn a_prompt_is_the_text_before_as_transformers_takes_prompt_ids_in_both_layouts() {
    let reference = reference();
    for layout in ["split", "merged"] {
        let dir = model_copy(layout);
        let model = load(dir.path(), reference.max_new_tokens);
        for case in &reference.prompted {
            let hints = Hints {
                prompt: case.before.clone(),
                ..Hints::default()
            };
            let context = model.context(&hints).unwrap();
            let mut prompt = context.clone();
            prompt.extend(model.prompt(&case.language).unwrap());
            assert_eq!(prompt, case.prompt, "{layout}: {}", case.audio);
            let tokens = model
                .decode_window_with(&samples(&case.audio), &case.language, &hints)
                .unwrap();
            assert_eq!(
                tokens, case.tokens,
                "{layout}: {} after a prompt",
                case.audio
            );
        }
        // Key terms follow the prompt, joined by commas; a long prompt keeps its end (half the positions).
        let hints = Hints {
            keyterms: vec!["M-Pesa".into(), "Kariakoo".into()],
            prompt: "Mteja anauliza".into(),
            timed: false,
        };
        let context = model.context(&hints).unwrap();
        assert_eq!(
            model.text(&context[1..]).unwrap(),
            "Mteja anauliza M-Pesa, Kariakoo"
        );
        assert!(model.context(&Hints::default()).unwrap().is_empty());
        let long = Hints {
            prompt: "habari za asubuhi ".repeat(200),
            keyterms: vec!["mwisho".into()],
            timed: false,
        };
        let kept = model.context(&long).unwrap();
        assert_eq!(kept.len(), 448 / 2);
        assert!(model
            .text(&kept[1..])
            .unwrap()
            .ends_with("habari za asubuhi mwisho"));
    }
}

#[test]
fn timestamps_follow_whispers_rules_as_transformers_applies_them() {
    let reference = reference();
    for layout in ["split", "merged"] {
        let dir = model_copy(layout);
        let model = load(dir.path(), reference.max_new_tokens);
        assert!(model.has_timestamps());
        for case in &reference.timed {
            let tokens = model
                .decode_timed_window(&samples(&case.audio), &case.language)
                .unwrap();
            assert_eq!(
                tokens, case.tokens,
                "{layout}: {} with timestamps",
                case.audio
            );
        }
    }
    // Through the recognizer, asked for times: segments between the timestamps, inside the clip's window, each
    // word its share of its segment.
    let model = load(&common::fixture("whisper/model"), reference.max_new_tokens);
    let speech = samples("speech.wav");
    let transcript = model
        .recognise(
            &speech,
            "sw",
            Task::Transcribe,
            &Hints::default(),
            &Cancel::new(),
        )
        .unwrap();
    assert_eq!(transcript.timing, WordTiming::WhisperTimestamps);
    assert!(!transcript.segments.is_empty());
    let mut last = 0.0;
    for segment in &transcript.segments {
        assert!(
            segment.start >= last - 1e-9 && segment.end >= segment.start,
            "{transcript:?}"
        );
        last = segment.end;
    }
    let words: Vec<&str> = transcript.words.iter().map(|w| w.word.as_str()).collect();
    assert_eq!(
        words,
        transcript.text.split_whitespace().collect::<Vec<_>>()
    );
    // By default Whisper writes its timestamps; asked not to (a CTC model aligns the words instead), it does not.
    assert_eq!(model.transcribe(&speech, "sw").unwrap(), transcript);
    let untimed = plain(&model, &speech, "sw", Task::Transcribe);
    assert_eq!(untimed.timing, WordTiming::None);
    assert!(untimed.words.is_empty());
}
