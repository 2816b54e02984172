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

/// A stream converts a reply piece by piece. Pieces cut on frame boundaries and converted one by one, with the
/// noise the whole would draw for their frames, differ from the whole converted at once only near the joins:
/// the converter's reach is finite, so the rest is the same.
#[test]
fn pieces_converted_one_by_one_join_to_the_whole() {
    let model = load();
    let speech = clip("espeak.wav");
    let tone = model.tone(&speech).unwrap();
    let hop = model.settings().hop_length;
    let channels = model.settings().channels;
    let (spec, frames) = model.spectrogram(&speech);
    let noise = model.noise(frames, 3);
    let whole = model
        .convert_spectrogram(spec, frames, noise.clone(), &tone, &tone)
        .unwrap();
    // Pieces of about 3 s (256 frames): the converter reaches about 100 frames either way (its posterior encoder
    // 32, the flow 32 each way, the decoder a few).
    let piece = 256 * hop;
    let mut joined = Vec::new();
    for (i, part) in speech.chunks(piece).enumerate() {
        let (spec, count) = model.spectrogram(part);
        let first = i * piece / hop;
        let slice: Vec<f32> = (0..channels)
            .flat_map(|c| noise[c * frames + first..c * frames + first + count].to_vec())
            .collect();
        joined.extend(
            model
                .convert_spectrogram(spec, count, slice, &tone, &tone)
                .unwrap(),
        );
    }
    assert_eq!(joined.len(), whole.len());
    let power: f64 = whole.iter().map(|s| f64::from(*s).powi(2)).sum();
    let error: f64 = whole
        .iter()
        .zip(&joined)
        .map(|(a, b)| f64::from(a - b).powi(2))
        .sum();
    let snr = 10.0 * (power / error.max(1e-30)).log10();
    // Beyond the converter's reach from a join (and from the ends), the pieces are the whole.
    let reach = 110 * hop;
    let far: f32 = (0..whole.len())
        .filter(|i| {
            let into = i % piece;
            into > reach && into + reach < piece
        })
        .map(|i| (whole[i] - joined[i]).abs())
        .fold(0.0, f32::max);
    println!("pieces against the whole: {snr:.1} dB, {far:e} away from the joins");
    assert!(snr > 20.0, "{snr:.1} dB");
    assert!(far < 1e-4, "{far}");
}

/// A stream's piece is handed on as the converter gets through it, each part converted with 32 frames of
/// context either side: joined, the parts are the piece converted whole, up to the converter's reach beyond
/// that context.
#[test]
fn a_piece_handed_on_in_parts_joins_to_the_piece_converted_whole() {
    use sauti::clone::neural::{Revoice, ToneProfile};
    let model = std::sync::Arc::new(load());
    let speech = sauti::audio::resample::resample(&clip("espeak.wav"), 22_050, 16_000);
    let tones = ToneProfile {
        converter: "openvoice-v2".into(),
        speaker: model.tone(&clip("other.wav")).unwrap(),
        base: model.tone(&clip("espeak.wav")).unwrap(),
    };
    let revoice = Revoice::new(std::sync::Arc::clone(&model), &tones).unwrap();
    let whole = revoice.apply(&speech).unwrap();
    let mut parts: Vec<Vec<f32>> = Vec::new();
    revoice
        .apply_parts(&speech, &mut |part| {
            parts.push(part);
            true
        })
        .unwrap();
    assert!(parts.len() >= 3, "{} parts", parts.len());
    assert!(
        parts[0].len() < 16_000 / 2,
        "the first part is short: {}",
        parts[0].len()
    );
    let joined = parts.concat();
    assert_eq!(joined.len(), speech.len());
    assert_eq!(whole.len(), speech.len());
    let power: f64 = whole.iter().map(|s| f64::from(*s).powi(2)).sum();
    let error: f64 = whole
        .iter()
        .zip(&joined)
        .map(|(a, b)| f64::from(a - b).powi(2))
        .sum();
    let snr = 10.0 * (power / error.max(1e-30)).log10();
    let peak = whole.iter().fold(0.0f32, |m, s| m.max(s.abs()));
    let worst = whole
        .iter()
        .zip(&joined)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    println!("parts against the whole: {snr:.1} dB, worst {worst:e} of a peak {peak:e}");
    assert!(snr > 30.0, "{snr:.1} dB");

    // Fed as a neural base voice makes it (a tenth of a second at a time), the first part comes before the piece
    // is whole, and the parts join to the same.
    let mut stream = revoice.streaming();
    let (mut fed, mut first_at) = (0usize, None);
    let mut streamed: Vec<f32> = Vec::new();
    for chunk in speech.chunks(1_600) {
        fed += chunk.len();
        stream
            .push(chunk, &mut |part| {
                first_at.get_or_insert(fed);
                streamed.extend(part);
                true
            })
            .unwrap();
    }
    stream
        .finish(&mut |part| {
            streamed.extend(part);
            true
        })
        .unwrap();
    let first_at = first_at.expect("parts before the end");
    assert!(
        first_at < speech.len() / 2,
        "first part after {first_at} of {}",
        speech.len()
    );
    assert_eq!(streamed.len(), speech.len());
    let worst_fed = streamed
        .iter()
        .zip(&joined)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(worst_fed < 1e-6, "{worst_fed}");

    // Nobody listening after the first part: no more work.
    let mut calls = 0;
    revoice
        .apply_parts(&speech, &mut |_| {
            calls += 1;
            false
        })
        .unwrap();
    assert_eq!(calls, 1);
}
