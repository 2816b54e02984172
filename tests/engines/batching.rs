//! Batched inference: recognitions whose model runs were gathered into batches with other recognitions' give the
//! same transcripts and word times as the same audio recognised alone, for the Whisper fixture (its encoder
//! batched) and the CTC fixture (stretches of one length batched).

use crate::common;

use std::sync::{Arc, Barrier};
use std::time::Duration;

use sauti::asr::ctc::{Ctc, CtcOptions};
use sauti::asr::whisper::{Whisper, WhisperOptions};
use sauti::asr::{Hints, Recognizer, Task, Transcript};
use sauti::cancel::Cancel;
use sauti::models::ModelSettings;

fn settings() -> ModelSettings {
    ModelSettings {
        onnxruntime: common::onnxruntime(),
        ..ModelSettings::default()
    }
}

fn samples(path: &str) -> Vec<f32> {
    let bytes = std::fs::read(common::fixture(path)).unwrap();
    sauti::audio::load_16k(&bytes, &Default::default())
        .unwrap()
        .samples
}

/// Eight different clips, in pairs of one length: the fixtures' three, quieter, reversed, and mixed.
fn clips() -> Vec<Vec<f32>> {
    let [speech, tones, mix] =
        ["speech", "tones", "mix"].map(|n| samples(&format!("whisper/{n}.wav")));
    let scaled = |s: &[f32], by: f32| s.iter().map(|x| x * by).collect::<Vec<_>>();
    let reversed = |s: &[f32]| s.iter().rev().copied().collect::<Vec<_>>();
    let summed: Vec<f32> = speech
        .iter()
        .zip(tones.iter().chain(std::iter::repeat(&0.0)))
        .map(|(a, b)| 0.6 * a + 0.4 * b)
        .collect();
    vec![
        scaled(&speech, 0.5),
        speech.clone(),
        reversed(&mix),
        mix,
        scaled(&tones, 0.3),
        tones,
        reversed(&summed),
        summed,
    ]
}

/// `work` on each input, each on its own thread, all started together; the outputs in order.
fn together<I, O>(inputs: Vec<I>, work: impl Fn(I) -> O + Send + Sync + 'static) -> Vec<O>
where
    I: Send + 'static,
    O: Send + 'static,
{
    let start = Arc::new(Barrier::new(inputs.len()));
    let work = Arc::new(work);
    let threads: Vec<_> = inputs
        .into_iter()
        .map(|input| {
            let (work, start) = (Arc::clone(&work), Arc::clone(&start));
            std::thread::spawn(move || {
                start.wait();
                work(input)
            })
        })
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

/// Each clip's transcript, all recognised at once.
fn at_once(model: Arc<dyn Recognizer>, clips: &[Vec<f32>]) -> Vec<Transcript> {
    together(clips.to_vec(), move |clip| {
        model
            .recognise(
                &clip,
                "sw",
                Task::Transcribe,
                &Hints::default(),
                &Cancel::new(),
            )
            .unwrap()
    })
}

/// The same texts and segments, and every word time within `frame` seconds.
fn assert_same(batched: &[Transcript], alone: &[Transcript], frame: f64) {
    for (i, (b, a)) in batched.iter().zip(alone).enumerate() {
        assert_eq!(b.text, a.text, "clip {i}");
        assert_eq!(b.segments.len(), a.segments.len(), "clip {i}");
        assert_eq!(b.words.len(), a.words.len(), "clip {i}");
        let close = |x: f64, y: f64| (x - y).abs() <= frame;
        for (bw, aw) in b.words.iter().zip(&a.words) {
            assert!(
                bw.word == aw.word && close(bw.start, aw.start) && close(bw.end, aw.end),
                "clip {i}: {bw:?} batched, {aw:?} alone"
            );
        }
        for (bs, as_) in b.segments.iter().zip(&a.segments) {
            assert!(bs.text == as_.text && close(bs.start, as_.start) && close(bs.end, as_.end));
        }
    }
    assert!(
        alone.iter().any(|t| !t.text.is_empty()),
        "the clips say something"
    );
}

#[test]
fn whisper_encoded_in_batches_equals_each_window_encoded_alone() {
    let options = WhisperOptions {
        sessions: 2,
        models: settings(),
        max_new_tokens: 24,
        variant: String::new(),
    };
    let dir = common::fixture("whisper/model");
    let alone = Whisper::load(&dir, &options).unwrap();
    let clips = clips();
    let expected: Vec<Transcript> = clips
        .iter()
        .map(|clip| {
            alone
                .recognise(
                    clip,
                    "sw",
                    Task::Transcribe,
                    &Hints::default(),
                    &Cancel::new(),
                )
                .unwrap()
        })
        .collect();
    assert_eq!(alone.batch_counts(), (0, 0), "off by default");
    let batched = Arc::new(
        Whisper::load(&dir, &options)
            .unwrap()
            .batched(4, Duration::from_millis(300)),
    );
    let transcripts = at_once(Arc::clone(&batched) as Arc<dyn Recognizer>, &clips);
    assert_same(&transcripts, &expected, 0.02);
    let (runs, windows) = batched.batch_counts();
    assert!(
        windows >= 8 && runs < windows,
        "{runs} encoder runs for {windows} windows"
    );
}

#[test]
fn ctc_stretches_of_one_length_run_in_batches_and_equal_each_run_alone() {
    // Windows of 2 s sharing 0.5 s: each clip is several windows, most of one length, so the clips' windows
    // share batches and the last, shorter ones of equal clips too.
    let options = CtcOptions {
        sessions: 2,
        models: settings(),
        variant: String::new(),
        window_seconds: 2.0,
        overlap_seconds: 0.5,
        lm: None,
        search: Default::default(),
    };
    let dir = common::fixture("ctc/model");
    let alone = Ctc::load(&dir, &options).unwrap();
    let clips = clips();
    let expected: Vec<Transcript> = clips
        .iter()
        .map(|clip| alone.transcribe(clip, "sw").unwrap())
        .collect();
    let batched = Arc::new(
        Ctc::load(&dir, &options)
            .unwrap()
            .batched(8, Duration::from_millis(300)),
    );
    let transcripts = at_once(Arc::clone(&batched) as Arc<dyn Recognizer>, &clips);
    // One frame of the model: 20 ms.
    assert_same(&transcripts, &expected, 0.02);
    let (runs, stretches) = batched.batch_counts();
    assert!(runs < stretches, "{runs} runs for {stretches} stretches");
    // The scores themselves, not only the words: a stretch batched with others scores as it does alone.
    let (one, width) = alone.logits(&clips[1][..32_000]).unwrap();
    let both = at_once_logits(&batched, [&clips[1][..32_000], &clips[3][..32_000]]);
    let worst = one
        .iter()
        .zip(&both[0])
        .map(|(a, b)| (a - b).abs())
        .fold(0.0f32, f32::max);
    assert!(
        width > 0 && one.len() == both[0].len() && worst < 1e-4,
        "{worst}"
    );
}

/// The scores of two stretches of one length, asked for together.
fn at_once_logits(model: &Arc<Ctc>, stretches: [&[f32]; 2]) -> Vec<Vec<f32>> {
    let model = Arc::clone(model);
    together(stretches.map(<[f32]>::to_vec).to_vec(), move |s| {
        model.logits(&s).unwrap().0
    })
}
