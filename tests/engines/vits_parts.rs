//! A neural voice split in its prior and decoder graphs (the MMS fixture's `model.prior.onnx` and
//! `model.decoder.onnx`, written by `tools/make_vits_fixtures.py`): the sentence handed on window by window is
//! the whole sentence's audio, the words are timed from the model's own durations, and a listener that leaves
//! stops the work.

use crate::common;

use sauti::models::ModelSettings;
use sauti::tts::lexicon::Lexicon;
use sauti::tts::vits::{VitsOptions, VitsVoice};
use sauti::tts::{SpokenWord, Synthesizer, VoiceSettings};

/// Windows are decoded with 16 frames of context: their samples equal the whole's up to the rounding of
/// convolutions run on inputs of another length.
const WINDOW_TOLERANCE: f32 = 1e-4;

fn voice() -> VitsVoice {
    let options = VitsOptions {
        speaker: 0,
        sessions: 2,
        models: ModelSettings {
            onnxruntime: common::onnxruntime(),
            ..ModelSettings::default()
        },
        lexicon: Lexicon::embedded().clone(),
    };
    let voice = VitsVoice::load(&common::fixture("vits/mms"), &options).unwrap();
    assert!(voice.is_split());
    voice
}

fn silent() -> VoiceSettings {
    VoiceSettings {
        speaking_rate: 1.0,
        noise_scale: 0.0,
        noise_scale_duration: 0.0,
    }
}

/// Piece `index` of `text` in parts: each part's samples, and the words that came with each.
fn parts(
    voice: &VitsVoice,
    text: &str,
    index: usize,
    timed: bool,
) -> (Vec<Vec<f32>>, Vec<Vec<SpokenWord>>) {
    let (mut samples, mut words) = (Vec::new(), Vec::new());
    let done = voice
        .synthesize_piece_parts(text, index, &silent(), None, timed, &mut |part, spoken| {
            samples.push(part);
            words.push(spoken);
            true
        })
        .unwrap();
    assert!(done);
    (samples, words)
}

fn worst(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn a_sentence_in_windows_is_the_whole_sentence() {
    let voice = voice();
    for text in [
        "Karibu Tanzania, rafiki yangu!",
        "Nina shilingi 250 kwenye akaunti yangu ya akiba.",
        "Habari",
    ] {
        let whole = voice.synthesize_piece(text, 0, &silent(), None).unwrap();
        let (parts, words) = parts(&voice, text, 0, false);
        let joined: Vec<f32> = parts.concat();
        assert_eq!(joined.len(), whole.len(), "{text:?}");
        let diff = worst(&joined, &whole);
        assert!(diff <= WINDOW_TOLERANCE, "{text:?}: max |diff| {diff:e}");
        assert!(
            words.iter().all(Vec::is_empty),
            "untimed parts carry no words"
        );
        // The first window is short (20 frames of 256 samples), the next ones three times longer each.
        assert_eq!(parts[0].len(), 20 * 256, "{text:?}");
        if whole.len() > 80 * 256 {
            assert!(parts.len() >= 3, "{text:?}: {} parts", parts.len());
            assert_eq!(parts[1].len(), 60 * 256);
        }
        eprintln!(
            "{text:?}: {} samples in {} parts, max |diff| {diff:.1e}",
            whole.len(),
            parts.len()
        );
    }
}

#[test]
fn words_are_timed_from_the_models_durations() {
    let voice = voice();
    let text = "Karibu Tanzania, rafiki yangu! Nina shilingi 250.";
    let (timed, words) = voice
        .synthesize_piece_timed(text, 0, &silent(), None)
        .unwrap()
        .expect("a split voice times its words");
    let plain = voice.synthesize_piece(text, 0, &silent(), None).unwrap();
    assert!(worst(&timed, &plain) <= WINDOW_TOLERANCE);
    let read: Vec<&str> = words.iter().map(|w| w.text.as_str()).collect();
    assert_eq!(
        read,
        [
            "karibu", "tanzania", "rafiki", "yangu", "nina", "shilingi", "mia", "mbili", "na",
            "hamsini"
        ]
    );
    let seconds = timed.len() as f64 / 16_000.0;
    let mut last_end = 0.0;
    for word in &words {
        assert!(word.start >= last_end - 1e-9, "{words:?}");
        assert!(word.end > word.start, "{word:?}");
        last_end = word.end;
    }
    // The last word ends with the audio (the text's last token is the blank after its last letter).
    assert!((last_end - seconds).abs() < 1e-6, "{last_end} vs {seconds}");
    // The words are spread over the audio, not bunched: each takes time in proportion to its letters, roughly.
    let longest = words.iter().map(|w| w.end - w.start).fold(0.0f64, f64::max);
    assert!(longest < seconds / 2.0, "{words:?}");

    // After the pause before a later sentence, times count from the start of the piece, pause included.
    let (parts, later) = parts(&voice, "Karibu Tanzania.", 1, true);
    assert!(parts[0][..3_200].iter().all(|&s| s == 0.0));
    assert!(later[0].first().unwrap().start >= 0.2, "{later:?}");
    assert!(
        later[1..].iter().all(Vec::is_empty),
        "words come with the first part"
    );
}

#[test]
fn a_listener_that_leaves_stops_the_work() {
    let voice = voice();
    let mut calls = 0;
    voice
        .synthesize_piece_parts(
            "Nina shilingi 250 kwenye akaunti yangu ya akiba, asante sana.",
            0,
            &silent(),
            None,
            false,
            &mut |_, _| {
                calls += 1;
                false
            },
        )
        .unwrap();
    assert_eq!(calls, 1);
}

#[test]
fn a_voice_without_split_graphs_hands_on_one_part_and_cannot_time() {
    let options = VitsOptions {
        speaker: 1,
        sessions: 1,
        models: ModelSettings {
            onnxruntime: common::onnxruntime(),
            ..ModelSettings::default()
        },
        lexicon: Lexicon::embedded().clone(),
    };
    let piper = VitsVoice::load(&common::fixture("vits/piper/sw-tiny.onnx"), &options).unwrap();
    assert!(!piper.is_split());
    let mut count = 0;
    let timed = piper
        .synthesize_piece_parts("Habari yako?", 0, &silent(), None, true, &mut |_, _| {
            count += 1;
            true
        })
        .unwrap();
    assert!(!timed);
    assert_eq!(count, 0);
    let whole = piper
        .synthesize_piece("Habari yako?", 0, &silent(), None)
        .unwrap();
    let (untimed, _) = parts(&piper, "Habari yako?", 0, false);
    assert_eq!(untimed, vec![whole]);
}

/// 16-bit samples of little-endian PCM bytes.
fn pcm(bytes: &[u8]) -> Vec<i16> {
    bytes
        .chunks_exact(2)
        .map(|b| i16::from_le_bytes([b[0], b[1]]))
        .collect()
}

#[test]
fn the_stream_of_a_split_voice_starts_with_its_first_window_and_is_the_whole() {
    use base64::Engine as _;
    use common::chunked::post_chunked;

    let dir = common::temp_dir();
    let config = dir.path().join("voices.toml");
    let voices = format!(
        "[[tts.voices]]\nid = \"tiny-mms\"\nname = \"Tiny MMS\"\nmodel = \"{}\"\n",
        common::fixture("vits/mms").display()
    );
    std::fs::write(&config, voices).unwrap();
    let library = common::onnxruntime();
    let server = common::Server::start_with_config(
        dir.path(),
        &config,
        &[("SAUTI__MODELS__ONNXRUNTIME", library.to_str().unwrap())],
    );
    let text = "Karibu Tanzania, rafiki yangu! Nina shilingi 250 kwenye akaunti.";
    let body = serde_json::json!({ "text": text, "voice_settings": { "noise_scale": 0.0, "noise_scale_duration": 0.0 } });
    let whole = common::post_json(
        &server.url("/v1/text-to-speech/tiny-mms"),
        Some(common::KEY_A),
        &body,
    );
    assert_eq!(
        whole.status,
        200,
        "{}",
        String::from_utf8_lossy(&whole.body)
    );
    let wav = base64::engine::general_purpose::STANDARD
        .decode(whole.json()["audio_base64"].as_str().unwrap())
        .unwrap();
    let whole = pcm(&wav[44..]);

    let streamed = post_chunked(
        &server,
        "/v1/text-to-speech/tiny-mms/stream",
        &body,
        usize::MAX,
    );
    assert_eq!(streamed.status, 200);
    // The first chunk: the streaming WAV header and the first window of the first sentence (20 frames).
    assert_eq!(streamed.chunks[0].len(), 44 + 20 * 256 * 2);
    // More chunks than sentences: the first sentence came window by window.
    assert!(
        streamed.chunks.len() > 2,
        "{} chunks",
        streamed.chunks.len()
    );
    let joined = pcm(&streamed.joined()[44..]);
    assert_eq!(joined.len(), whole.len());
    let off = joined
        .iter()
        .zip(&whole)
        .map(|(a, b)| (i32::from(*a) - i32::from(*b)).abs())
        .max()
        .unwrap_or(0);
    assert!(
        off <= 2,
        "streamed and whole differ by {off} in 16-bit samples"
    );
}
