//! Turn-taking benchmark, two tables measured in one run:
//!
//! 1. Speech detection on the phone: Silero VAD against the energy detector, frame by frame (10 ms cells),
//!    precision, recall and F1 at 20, 10 and 5 dB SNR. Speech from the embedded voices and eSpeak NG
//!    (`bench/turns_utterances.txt`), gaps of 0.4–1.6 s between utterances, line noise (hiss, a low rumble and
//!    mains hum) added at the SNR over the speech, then the whole put through the phone band (8 kHz μ-law and
//!    back). A cell is speech when the clean signal's 10 ms around it is above -50 dBFS.
//! 2. The end of a turn: Smart Turn v3 (pause 200 ms, longest 2 s) against a fixed 500 ms silence, on the same
//!    utterances with a 0.6–1.2 s pause where the bar is, in two shapes: the first part said as a phrase of its
//!    own ending in a comma ("comma"), and a pause cut into the whole sentence ("cut"). False cut-offs: turns
//!    ended in the pause. Delay: end of speech to end of turn (Smart Turn's inference time measured apart).
//!
//! Needs the models: `cargo test --test engines turn_models` installs them into target/turn-models (or set
//! SAUTI_TURN_MODELS to a models folder with silero-vad and smart-turn-v3), ORT_DYLIB_PATH, and espeak-ng.
//!
//!     export ORT_DYLIB_PATH=$(bash tools/onnxruntime.sh); cargo bench --bench turns

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use sauti::audio::output::g711;
use sauti::audio::vad::{EndedBy, Ending, EnergyJudge, SpeechJudge, StreamingVad, VadEvent};
use sauti::config::TurnSettings;
use sauti::models::ModelSettings;
use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};
use sauti::turns::silero::Silero;
use sauti::turns::smart_turn::SmartTurn;
use sauti::turns::TurnModels;

const RATE: usize = 16_000;
const CELL: usize = RATE / 100;

/// A small deterministic generator (the runs are comparable).
struct Noise(u64);

impl Noise {
    fn uniform(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 40) as f32 / (1u64 << 24) as f32
    }
    fn white(&mut self) -> f32 {
        self.uniform() * 2.0 - 1.0
    }
}

fn utterances() -> Vec<(String, String)> {
    include_str!("turns_utterances.txt")
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('|'))
        .map(|l| {
            let (a, b) = l.split_once('|').unwrap();
            (a.trim().to_string(), b.trim().to_string())
        })
        .collect()
}

/// Speech by one of the three speakers, peak-normalised to 0.3.
fn say(speaker: usize, text: &str) -> Vec<f32> {
    let mut samples = match speaker {
        0 => EmbeddedVoice::zuri()
            .synthesize(text, &VoiceSettings::default())
            .unwrap(),
        1 => EmbeddedVoice::baraka()
            .synthesize(text, &VoiceSettings::default())
            .unwrap(),
        _ => {
            let file = std::env::temp_dir().join(format!("sauti-turns-{}.wav", std::process::id()));
            let status = Command::new("espeak-ng")
                .args(["-v", "sw", "-w"])
                .arg(&file)
                .arg(text)
                .status()
                .expect("espeak-ng runs (apt-get install espeak-ng)");
            assert!(status.success(), "espeak-ng failed");
            let wav = std::fs::read(&file).unwrap();
            sauti::audio::load_16k(&wav, &Default::default())
                .unwrap()
                .samples
        }
    };
    // Leading and trailing silence is the track's to place.
    let loud = |s: &f32| s.abs() > 1e-3;
    let first = samples.iter().position(loud).unwrap_or(0);
    let last = samples.iter().rposition(loud).map_or(0, |i| i + 1);
    samples = samples[first..last.max(first)].to_vec();
    let peak = samples.iter().fold(0f32, |m, s| m.max(s.abs())).max(1e-6);
    samples.iter().map(|s| s * 0.3 / peak).collect()
}

/// Line noise at `snr` dB below `speech_power`: hiss, a low rumble and 50 Hz hum.
fn line_noise(length: usize, speech_power: f32, snr: f32, noise: &mut Noise) -> Vec<f32> {
    let mut rumble = 0f32;
    let raw: Vec<f32> = (0..length)
        .map(|i| {
            rumble = 0.97 * rumble + 0.03 * noise.white();
            let hum = (2.0 * std::f32::consts::PI * 50.0 * i as f32 / RATE as f32).sin();
            0.5 * noise.white() + 4.0 * rumble + 0.2 * hum
        })
        .collect();
    let power = raw.iter().map(|s| s * s).sum::<f32>() / length as f32;
    let gain = (speech_power / power / 10f32.powf(snr / 10.0)).sqrt();
    raw.iter().map(|s| s * gain).collect()
}

/// Through the phone: 8 kHz μ-law and back to 16 kHz.
fn phone(samples: &[f32]) -> Vec<f32> {
    let narrow = sauti::audio::resample::resample(samples, 16_000, 8_000);
    let coded: Vec<f32> = narrow
        .iter()
        .map(|s| {
            let code = g711::ulaw((s.clamp(-1.0, 1.0) * 32767.0) as i16);
            f32::from(g711::ulaw_to_linear(code)) / 32768.0
        })
        .collect();
    sauti::audio::resample::to_16k(&coded, 8_000)
}

fn power(samples: &[f32]) -> f32 {
    samples.iter().map(|s| s * s).sum::<f32>() / samples.len().max(1) as f32
}

/// The judge's decision for every 10 ms cell of `audio`.
fn cells(judge: &mut dyn SpeechJudge, audio: &[f32]) -> Vec<bool> {
    let frame = judge.frame_len();
    let mut speaking = false;
    let mut decisions = Vec::new();
    for chunk in audio.chunks_exact(frame) {
        speaking = judge.is_speech(chunk, speaking);
        decisions.push(speaking);
    }
    (0..audio.len() / CELL)
        .map(|c| {
            decisions
                .get((c * CELL + CELL / 2) / frame)
                .copied()
                .unwrap_or(false)
        })
        .collect()
}

struct Score {
    precision: f64,
    recall: f64,
    f1: f64,
}

fn score(truth: &[bool], said: &[bool]) -> Score {
    let (mut tp, mut fp, mut fneg) = (0f64, 0f64, 0f64);
    for (t, s) in truth.iter().zip(said) {
        match (t, s) {
            (true, true) => tp += 1.0,
            (false, true) => fp += 1.0,
            (true, false) => fneg += 1.0,
            _ => {}
        }
    }
    let precision = tp / (tp + fp).max(1.0);
    let recall = tp / (tp + fneg).max(1.0);
    let f1 = 2.0 * precision * recall / (precision + recall).max(1e-9);
    Score {
        precision,
        recall,
        f1,
    }
}

fn detection(models: &TurnModels, speech: &[Vec<f32>]) {
    let mut noise = Noise(46);
    let mut clean = Vec::new();
    for (i, utterance) in speech.iter().enumerate() {
        let gap = (0.4 + 1.2 * noise.uniform()) * RATE as f32;
        clean.extend(std::iter::repeat_n(0f32, gap as usize));
        // Callers are near and far from their phones: levels over 12 dB.
        let level = 10f32.powf(-((i % 4) as f32) * 4.0 / 20.0);
        clean.extend(utterance.iter().map(|s| s * level));
    }
    clean.extend(std::iter::repeat_n(0f32, RATE));
    let truth: Vec<bool> = clean
        .chunks_exact(CELL)
        .map(|c| 10.0 * power(c).max(1e-12).log10() > -50.0)
        .collect();
    let speech_power = power(&clean) * clean.len() as f32
        / truth.iter().filter(|&&t| t).count().max(1) as f32
        / CELL as f32;
    println!(
        "{:.0} s of audio, {:.0} % of it speech; 10 ms cells",
        clean.len() as f64 / RATE as f64,
        100.0 * truth.iter().filter(|&&t| t).count() as f64 / truth.len() as f64
    );
    println!();
    println!(
        "| SNR | energy P | energy R | energy F1 | Silero P | Silero R | Silero F1 | F1 ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for snr in [20f32, 10.0, 5.0] {
        let noisy: Vec<f32> = clean
            .iter()
            .zip(line_noise(clean.len(), speech_power, snr, &mut noise))
            .map(|(s, n)| s + n)
            .collect();
        let heard = phone(&noisy);
        let energy = score(&truth, &cells(&mut EnergyJudge::default(), &heard));
        let silero = score(&truth, &cells(models.judge().as_mut(), &heard));
        println!(
            "| {snr:.0} dB | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.2}× |",
            energy.precision,
            energy.recall,
            energy.f1,
            silero.precision,
            silero.recall,
            silero.f1,
            silero.f1 / energy.f1.max(1e-9)
        );
    }
}

/// One caller turn with a pause in it: the stream, where the pause ends, and where the speech ends.
struct Paused {
    audio: Vec<f32>,
    first_ends: usize,
    resumes: usize,
    ends: usize,
}

fn paused(first: &[f32], second: &[f32], pause: f32, noise: &mut Noise) -> Paused {
    let lead = RATE / 2;
    let mut clean = vec![0f32; lead];
    clean.extend_from_slice(first);
    let first_ends = clean.len();
    clean.extend(std::iter::repeat_n(0f32, (pause * RATE as f32) as usize));
    let resumes = clean.len();
    clean.extend_from_slice(second);
    let ends = clean.len();
    clean.extend(std::iter::repeat_n(0f32, 3 * RATE));
    let speech_power = (power(first) + power(second)) / 2.0;
    let line = line_noise(clean.len(), speech_power, 20.0, noise);
    let audio = phone(
        &clean
            .iter()
            .zip(line)
            .map(|(s, n)| s + n)
            .collect::<Vec<_>>(),
    );
    Paused {
        audio,
        first_ends,
        resumes,
        ends,
    }
}

/// Where the turns of `case` ended (samples into the stream), judging pauses with `judge` when given.
fn turn_ends(
    vad: &mut StreamingVad,
    case: &Paused,
    judge: Option<&SmartTurn>,
) -> Vec<(usize, EndedBy)> {
    let mut ends = Vec::new();
    let mut at = 0;
    for chunk in case.audio.chunks(RATE / 50) {
        at += chunk.len();
        let mut events = vad.push(chunk);
        while let Some(event) = events.pop() {
            match event {
                VadEvent::Paused { id, audio } => {
                    let complete = judge.is_none_or(|m| m.complete(&audio).unwrap() > 0.5);
                    events.extend(vad.decide(id, complete));
                }
                VadEvent::TurnEnded(_, by) => ends.push((at, by)),
                VadEvent::SpeechStarted | VadEvent::Settled(_) => {}
            }
        }
    }
    ends
}

fn ending(models: &TurnModels, smart: &SmartTurn) {
    let mut noise = Noise(7);
    let pairs = utterances();
    let mut cases: Vec<(&str, Paused)> = Vec::new();
    for (i, (first, second)) in pairs.iter().enumerate() {
        let speaker = i % 3;
        let pause = [0.6, 0.8, 1.0, 1.2][i % 4];
        let comma = say(speaker, &format!("{first},"));
        cases.push((
            "comma",
            paused(&comma, &say(speaker, second), pause, &mut noise),
        ));
        let whole = say((speaker + 1) % 3, &format!("{first} {second}"));
        let frame = RATE / 50;
        let energy = |at: usize| power(&whole[at..at + frame]);
        let cut = (whole.len() * 35 / 100 / frame..whole.len() * 65 / 100 / frame)
            .map(|f| f * frame)
            .min_by(|&a, &b| energy(a).total_cmp(&energy(b)))
            .unwrap();
        cases.push((
            "cut",
            paused(&whole[..cut], &whole[cut..], pause, &mut noise),
        ));
    }
    let mut times = Vec::new();
    for case in cases.iter().take(8) {
        let start = Instant::now();
        smart.complete(&case.1.audio[..case.1.resumes]).unwrap();
        times.push(start.elapsed());
    }
    times.sort();
    let inference = times[times.len() / 2];
    println!();
    println!(
        "{} turns with a pause of 0.6–1.2 s ({} of each shape); Smart Turn's inference: {:.0} ms a pause (median, one thread)",
        cases.len(),
        cases.len() / 2,
        inference.as_secs_f64() * 1000.0
    );
    separation(smart, &cases);
    println!();
    println!("| policy | shape | false cut-offs | turns ended | mean delay | p90 delay | by the longest silence |");
    println!("|---|---|---|---|---|---|---|");
    let settings = TurnSettings::default();
    let policies: [(&str, Ending, bool); 2] = [
        (
            "fixed 500 ms",
            Ending::Silence(Duration::from_millis(500)),
            false,
        ),
        (
            "Smart Turn",
            Ending::Judged {
                pause: Duration::from_millis(settings.smart_turn_pause_ms),
                longest: Duration::from_millis(settings.smart_turn_longest_ms),
            },
            true,
        ),
    ];
    for (name, policy, judged) in policies {
        for shape in ["comma", "cut"] {
            let (mut cut_offs, mut ended, mut longest, mut delays) = (0, 0, 0, Vec::new());
            for (_, case) in cases.iter().filter(|(s, _)| *s == shape) {
                let mut vad = StreamingVad::with(models.judge(), policy);
                let ends = turn_ends(&mut vad, case, judged.then_some(smart));
                cut_offs += usize::from(ends.iter().any(|&(at, _)| at < case.resumes));
                if let Some(&(at, by)) = ends.iter().find(|&&(at, _)| at >= case.ends) {
                    ended += 1;
                    longest += usize::from(by == EndedBy::Longest);
                    let mut delay = (at - case.ends) as f64 / RATE as f64;
                    if judged && by == EndedBy::Judged {
                        delay += inference.as_secs_f64();
                    }
                    delays.push(delay);
                }
            }
            delays.sort_by(f64::total_cmp);
            let mean = delays.iter().sum::<f64>() / delays.len().max(1) as f64;
            let p90 = delays.get(delays.len() * 9 / 10).copied().unwrap_or(0.0);
            println!(
                "| {name} | {shape} | {cut_offs} of {} | {ended} | {:.0} ms | {:.0} ms | {longest} |",
                cases.len() / 2,
                mean * 1000.0,
                p90 * 1000.0
            );
        }
    }
}

/// How far apart Smart Turn's probabilities are for pauses inside a turn and for its end: each judged after
/// 200 ms of silence, as a session judges them.
fn separation(smart: &SmartTurn, cases: &[(&str, Paused)]) {
    let pause = RATE / 5;
    let (mut inside, mut end) = (Vec::new(), Vec::new());
    for (_, case) in cases {
        inside.push(
            smart
                .complete(&case.audio[..paused_at(case) + pause])
                .unwrap(),
        );
        end.push(smart.complete(&case.audio[..case.ends + pause]).unwrap());
    }
    let mean = |v: &[f32]| v.iter().sum::<f32>() / v.len() as f32;
    println!();
    println!(
        "Smart Turn's probability of a complete turn: {:.2} on average at pauses inside turns, {:.2} at their ends",
        mean(&inside),
        mean(&end)
    );
    println!();
    println!("| threshold | pauses inside taken as ends | ends taken as ends |");
    println!("|---|---|---|");
    for threshold in [0.5f32, 0.7, 0.8, 0.9, 0.95] {
        let above = |v: &[f32]| v.iter().filter(|&&p| p > threshold).count();
        println!(
            "| {threshold:.2} | {} of {} | {} of {} |",
            above(&inside),
            inside.len(),
            above(&end),
            end.len()
        );
    }
}

/// Where the first part's speech ends in `case`.
fn paused_at(case: &Paused) -> usize {
    case.first_ends
}

fn main() {
    let dir = std::env::var_os("SAUTI_TURN_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/turn-models"));
    let settings = ModelSettings::default();
    let silero = Silero::load(&dir.join("silero-vad"), &settings).expect(
        "Silero VAD installed (cargo test --test engines turn_models, or SAUTI_TURN_MODELS)",
    );
    let smart =
        SmartTurn::load(&dir.join("smart-turn-v3"), &settings).expect("Smart Turn installed");
    let models = TurnModels::of(Some(Arc::new(silero)), None, TurnSettings::default());
    let pairs = utterances();
    let speech: Vec<Vec<f32>> = pairs
        .iter()
        .enumerate()
        .map(|(i, (a, b))| say(i % 3, &format!("{a} {b}")))
        .collect();
    println!("## Speech detection on the phone band (8 kHz μ-law), line noise");
    println!();
    detection(&models, &speech);
    println!();
    println!(
        "## End of turn: Smart Turn v3 against a fixed 500 ms silence (20 dB SNR, phone band)"
    );
    ending(&models, &smart);
}
