//! Embedded-voice benchmark: synthesis speed for 200 and 2,000 characters of Swahili, as real-time factor,
//! against eSpeak NG's Swahili voice (another formant synthesizer) timed in the same run.
//!
//! Run: `cargo bench --bench tts` (the reference needs `espeak-ng`: `apt-get install espeak-ng`; without it
//! only sauti's rows are printed). Single-threaded: one sentence after another on one core.

use std::process::Command;
use std::time::{Duration, Instant};

use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

const RUNS: usize = 7;
const PARAGRAPH: &str = "Habari ya asubuhi, karibu kwenye huduma ya benki yetu. Salio lako ni TSh 12,500 tarehe \
12/03/2025. Ukitaka kutuma pesa, sema kiasi na namba ya simu ya mpokeaji. Tawi letu liko wazi kuanzia saa 08:00 \
hadi saa 16:30. Asante kwa kutuchagua, na uwe na siku njema! ";

fn text_of(chars: usize) -> String {
    let mut text = String::new();
    while text.chars().count() < chars {
        text.push_str(PARAGRAPH);
    }
    let cut: String = text.chars().take(chars).collect();
    // End on a word boundary so the last word is whole.
    cut.rsplit_once(' ')
        .map_or(cut.clone(), |(head, _)| head.to_string())
}

fn median(mut f: impl FnMut() -> f64) -> (Duration, f64) {
    let mut audio = f();
    let mut times: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            audio = f();
            start.elapsed()
        })
        .collect();
    times.sort();
    (times[RUNS / 2], audio)
}

fn main() {
    let espeak = Command::new("espeak-ng").arg("--version").output().is_ok();
    println!("synthesis on one thread; median of {RUNS} runs; speed = audio seconds / processing seconds");
    println!();
    println!("| engine | characters | audio | time | speed (× real time) | vs eSpeak NG |");
    println!("|---|---|---|---|---|---|");
    let settings = VoiceSettings::default();
    for chars in [200, 2_000] {
        let text = text_of(chars);
        let mut espeak_speed = None;
        if espeak {
            let out = std::env::temp_dir().join("sauti-bench-espeak.wav");
            let (time, audio) = median(|| {
                let status = Command::new("espeak-ng")
                    .args(["-v", "sw", "-w"])
                    .arg(&out)
                    .arg(&text)
                    .status();
                assert!(status.is_ok_and(|s| s.success()), "espeak-ng failed");
                let bytes = std::fs::read(&out).unwrap_or_default();
                let reader =
                    hound::WavReader::new(std::io::Cursor::new(bytes)).expect("espeak WAV");
                f64::from(reader.duration()) / f64::from(reader.spec().sample_rate)
            });
            let speed = audio / time.as_secs_f64();
            espeak_speed = Some(speed);
            println!(
                "| eSpeak NG (process) | {chars} | {audio:.1} s | {:.1} ms | {speed:.0}× | 1.00× |",
                ms(time)
            );
        }
        for (name, voice) in [
            ("sauti zuri", EmbeddedVoice::zuri()),
            ("sauti baraka", EmbeddedVoice::baraka()),
        ] {
            let (time, audio) = median(|| {
                let samples = voice.synthesize(&text, &settings).expect("synthesises");
                samples.len() as f64 / 16_000.0
            });
            let speed = audio / time.as_secs_f64();
            let versus = espeak_speed.map_or("n/a".to_string(), |e| format!("{:.2}×", speed / e));
            println!(
                "| {name} | {chars} | {audio:.1} s | {:.1} ms | {speed:.0}× | {versus} |",
                ms(time)
            );
        }
    }
    println!();
    println!("(target: at least 100× real time on one core; eSpeak NG includes process start-up)");
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
