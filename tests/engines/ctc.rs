//! CTC recognition against the reference of `tools/make_ctc_fixtures.py`: a tiny random-weight transformers
//! `Wav2Vec2ForCTC` in XLS-R's layout, with transformers' logits, greedy transcripts and word offsets. Runs
//! through the real ONNX Runtime library from PyPI.

use crate::common;

use sauti::asr::ctc::{Ctc, CtcOptions};
use sauti::asr::Recognizer;
use sauti::cancel::Cancel;
use sauti::models::ModelSettings;
use serde::Deserialize;

/// Largest logit difference allowed from transformers (float32 through two runtimes).
const LOGIT_TOLERANCE: f32 = 1e-3;

#[derive(Debug, Deserialize)]
struct Reference {
    inputs_to_logits_ratio: usize,
    sampling_rate: usize,
    cases: Vec<Case>,
}

#[derive(Debug, Deserialize)]
struct Case {
    audio: String,
    logits: String,
    frames: usize,
    vocab: usize,
    text: String,
    words: Vec<OffsetWord>,
}

#[derive(Debug, Deserialize)]
struct OffsetWord {
    word: String,
    start_offset: usize,
    end_offset: usize,
}

fn reference() -> Reference {
    let text = std::fs::read_to_string(common::fixture("ctc/reference.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn samples(audio: &str) -> Vec<f32> {
    let bytes = std::fs::read(common::fixture("ctc").join(audio)).unwrap();
    sauti::audio::load_16k(&bytes, &Default::default())
        .unwrap()
        .samples
}

fn options(window_seconds: f64, overlap_seconds: f64) -> CtcOptions {
    CtcOptions {
        sessions: 2,
        models: ModelSettings {
            onnxruntime: common::onnxruntime(),
            ..ModelSettings::default()
        },
        variant: String::new(),
        window_seconds,
        overlap_seconds,
        lm: None,
        search: Default::default(),
    }
}

fn load(window_seconds: f64, overlap_seconds: f64) -> Ctc {
    Ctc::load(
        &common::fixture("ctc/model"),
        &options(window_seconds, overlap_seconds),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// transformers' words as sauti writes them: `[UNK]` writes nothing (a word of nothing else is no word).
fn expected_words(case: &Case, reference: &Reference) -> Vec<(String, f64, f64)> {
    let seconds = |frame: usize| {
        (frame * reference.inputs_to_logits_ratio) as f64 / reference.sampling_rate as f64
    };
    case.words
        .iter()
        .map(|w| (w.word.replace("[UNK]", ""), w))
        .filter(|(text, _)| !text.is_empty())
        .map(|(text, w)| (text, seconds(w.start_offset), seconds(w.end_offset)))
        .collect()
}

#[test]
fn logits_transcripts_and_word_timings_match_transformers() {
    let reference = reference();
    let model = load(30.0, 2.0);
    for case in &reference.cases {
        let audio = samples(&case.audio);
        assert_eq!(model.frames_for(audio.len()), case.frames, "{}", case.audio);
        let (logits, width) = model.logits(&audio).unwrap();
        assert_eq!((logits.len() / width, width), (case.frames, case.vocab));
        let expected = common::floats(&common::fixture("ctc").join(&case.logits));
        let worst = logits
            .iter()
            .zip(&expected)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f32, f32::max);
        assert!(
            worst < LOGIT_TOLERANCE,
            "{}: logits differ by {worst}",
            case.audio
        );

        let transcript = model.transcribe(&audio, "sw").unwrap();
        let words: Vec<(String, f64, f64)> = transcript
            .words
            .iter()
            .map(|w| (w.word.clone(), w.start, w.end))
            .collect();
        assert_eq!(words, expected_words(case, &reference), "{}", case.audio);
        let text: Vec<String> = case
            .text
            .split(' ')
            .map(|w| w.replace("[UNK]", ""))
            .filter(|w| !w.is_empty())
            .collect();
        assert_eq!(transcript.text, text.join(" "), "{}", case.audio);
    }
}

#[test]
fn long_audio_is_read_in_overlapping_windows_that_join_without_a_seam() {
    let reference = reference();
    let case = reference
        .cases
        .iter()
        .max_by_key(|c| c.frames)
        .expect("a case");
    let audio = samples(&case.audio);
    let seconds = audio.len() as f64 / 16_000.0;
    // Windows of 4 s sharing 1 s: several windows over the longest fixture, each normalised on its own, so the
    // frames differ a little from one pass; the path must still hold together.
    let windowed = load(4.0, 1.0);
    let whole = load(seconds + 1.0, 0.0);
    let cancel = Cancel::new();
    let path = windowed.best_path(&audio, &cancel).unwrap();
    let one_pass = whole.best_path(&audio, &cancel).unwrap();
    assert_eq!(path.len(), one_pass.len(), "every frame once");
    let same = path.iter().zip(&one_pass).filter(|(a, b)| a == b).count();
    assert!(
        same * 10 >= path.len() * 8,
        "{same} of {} frames agree",
        path.len()
    );

    let transcript = windowed.transcribe(&audio, "sw").unwrap();
    let mut previous_end = 0.0;
    for word in &transcript.words {
        assert!(!word.word.is_empty());
        assert!(
            word.start >= previous_end && word.start < word.end && word.end <= seconds,
            "{word:?}"
        );
        previous_end = word.end;
    }
    assert!(!transcript.segments.is_empty());
    let joined: Vec<&str> = transcript.words.iter().map(|w| w.word.as_str()).collect();
    assert_eq!(transcript.text, joined.join(" "));
}

#[test]
fn cancelled_recognition_stops_and_silence_or_a_blip_says_nothing() {
    let model = load(30.0, 2.0);
    let cancel = Cancel::new();
    cancel.cancel();
    let audio = samples(&reference().cases[0].audio);
    assert_eq!(
        model.transcribe_until(&audio, "sw", &cancel),
        Err(sauti::asr::AsrError::Cancelled)
    );
    for blip in [0, 10, 399] {
        let transcript = model.transcribe(&vec![0.0; blip], "sw").unwrap();
        assert!(
            transcript.words.is_empty() && transcript.text.is_empty(),
            "{blip} samples"
        );
    }
}

#[test]
fn missing_files_are_named() {
    let dir = common::temp_dir();
    let options = options(30.0, 2.0);
    let error = Ctc::load(dir.path(), &options)
        .err()
        .expect("no model")
        .to_string();
    assert!(error.contains("model.onnx"), "{error}");
    for file in ["model.onnx", "config.json", "vocab.json"] {
        std::fs::copy(
            common::fixture("ctc/model").join(file),
            dir.path().join(file),
        )
        .unwrap();
    }
    std::fs::write(
        dir.path().join("preprocessor_config.json"),
        r#"{"sampling_rate": 8000}"#,
    )
    .unwrap();
    let error = Ctc::load(dir.path(), &options)
        .err()
        .expect("wrong rate")
        .to_string();
    assert!(error.contains("8000"), "{error}");
}

#[test]
fn stt_eval_reports_error_rates_after_one_normalisation() {
    let reference = reference();
    let (speech, tones) = (&reference.cases[0], &reference.cases[1]);
    assert!(!speech.text.contains("[UNK]") && !tones.text.contains("[UNK]"));
    let dir = common::temp_dir();
    let config = dir.path().join("routes.toml");
    std::fs::write(
        &config,
        format!(
            "[[asr.ctc]]\nlanguages = [\"sw\"]\nmodel = {:?}\n",
            common::fixture("ctc/model")
        ),
    )
    .unwrap();
    // The first reference differs from the transcript only in case and punctuation: no error once normalised.
    // The second has one word of three changed: WER 1/3.
    let shouted = format!("{}!", speech.text.to_uppercase().replacen(' ', ", ", 1));
    let mut words: Vec<&str> = tones.text.split(' ').collect();
    assert_eq!(words.len(), 3);
    words[1] = "habari";
    let manifest = dir.path().join("calls.tsv");
    std::fs::write(
        &manifest,
        format!(
            "audio\ttext\n{}\t{shouted}\n{}\t{}\n",
            common::fixture("ctc").join(&speech.audio).display(),
            common::fixture("ctc").join(&tones.audio).display(),
            words.join(" ")
        ),
    )
    .unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(["stt", "eval"])
        .arg(&manifest)
        .arg("--config")
        .arg(&config)
        .arg("--json")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__MODELS__ONNXRUNTIME", common::onnxruntime())
        .env("SAUTI__ASR__MODEL", "no-whisper-here")
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let files = report["files"].as_array().unwrap();
    assert_eq!(files[0]["wer"], 0.0, "{report:#}");
    assert_eq!(files[0]["cer"], 0.0);
    assert!(
        (files[1]["wer"].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-9,
        "{report:#}"
    );
    assert!(files[1]["cer"].as_f64().unwrap() > 0.0);
    let overall = &report["overall"];
    assert_eq!(overall["files"], 2);
    let words = overall["words"].as_f64().unwrap();
    assert!(
        (overall["wer"].as_f64().unwrap() - 1.0 / words).abs() < 1e-9,
        "{report:#}"
    );
    assert!(overall["rtf"].as_f64().unwrap() > 0.0);

    // The table form names every file and the overall line.
    let table = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args(["stt", "eval"])
        .arg(&manifest)
        .arg("--config")
        .arg(&config)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("SAUTI__MODELS__ONNXRUNTIME", common::onnxruntime())
        .output()
        .unwrap();
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(
        table.lines().any(|l| l.starts_with("| overall (2 files")),
        "{table}"
    );
}

/// Forced alignment against the CTC model's own alignment: the model's transcript, written as another engine
/// would (capitals, punctuation, one segment for the whole clip), aligned with its frames gives the same words
/// within a frame or two of the times greedy decoding gave them.
#[test]
fn forced_alignment_retimes_a_transcript_as_the_model_times_its_own() {
    let model = load(30.0, 2.0);
    let mut differences: Vec<f64> = Vec::new();
    for audio in [
        "../whisper/speech.wav",
        "../whisper/tones.wav",
        "../whisper/mix.wav",
    ] {
        let samples = samples(audio);
        let own = model.transcribe(&samples, "sw").unwrap();
        assert_eq!(own.timing, sauti::asr::WordTiming::Ctc);
        let written: Vec<String> = own
            .words
            .iter()
            .enumerate()
            .map(|(i, w)| match i % 3 {
                0 => w.word.to_uppercase(),
                1 => format!("{},", w.word),
                _ => w.word.clone(),
            })
            .collect();
        let segment = sauti::asr::Segment {
            start: 0.0,
            end: samples.len() as f64 / 16_000.0,
            text: format!("{} 250.", written.join(" ")),
        };
        let aligned = model.align(&samples, &[segment], &Cancel::new()).unwrap();
        assert_eq!(aligned.len(), own.words.len() + 1, "{audio}");
        for ((a, w), text) in aligned.iter().zip(&own.words).zip(&written) {
            assert_eq!(&a.word, text);
            differences.push((a.start - w.start).abs());
            differences.push((a.end - w.end).abs());
        }
        // The number the model cannot spell takes what is left after the last word.
        let last = aligned.last().unwrap();
        assert_eq!(last.word, "250.");
        assert!(last.start >= aligned[aligned.len() - 2].end && last.end >= last.start);
    }
    let mean = differences.iter().sum::<f64>() / differences.len() as f64;
    let worst = differences.iter().copied().fold(0.0, f64::max);
    eprintln!(
        "forced alignment against the model's own: {} boundaries, mean {:.1} ms, worst {:.1} ms",
        differences.len(),
        mean * 1000.0,
        worst * 1000.0
    );
    assert!(mean <= 0.02, "mean boundary difference {mean} s");
    assert!(worst <= 0.1, "worst boundary difference {worst} s");
}
