//! Audio benchmark: decode + resample to 16 kHz mono, against ffmpeg doing the same job in the same run.
//!
//! Run: `cargo bench --bench audio` (needs `ffmpeg` on PATH: `apt-get install ffmpeg`).
//! Inputs (60 s of 44.1 kHz stereo MP3 and of 48 kHz Opus in Ogg and WebM) are generated with ffmpeg into
//! `bench/data/` on first use. Each row is the median of several runs; the ratio column compares with ffmpeg
//! measured in this same run, since absolute times on a shared machine are noisy.

use std::path::{Path, PathBuf};
use std::process::Command;
#[path = "timing.rs"]
mod timing;

use std::time::Duration;

use sauti::audio::{self, DecodeLimits};

const RUNS: usize = 7;
const SECONDS: f64 = 60.0;

fn main() {
    let data = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("bench/data");
    std::fs::create_dir_all(&data).expect("create bench/data");
    if Command::new("ffmpeg").arg("-version").output().is_err() {
        eprintln!("ffmpeg is needed as the reference: apt-get install ffmpeg");
        std::process::exit(2);
    }
    let inputs = [
        (
            "MP3 44.1 kHz stereo 128k",
            "speech-44k-stereo.mp3",
            &[
                "-ar",
                "44100",
                "-ac",
                "2",
                "-c:a",
                "libmp3lame",
                "-b:a",
                "128k",
            ][..],
        ),
        (
            "Opus 48 kHz mono (Ogg)",
            "speech-48k.ogg",
            &["-ar", "48000", "-ac", "1", "-c:a", "libopus", "-b:a", "32k"][..],
        ),
        (
            "Opus 48 kHz stereo (WebM)",
            "speech-48k-stereo.webm",
            &["-ar", "48000", "-ac", "2", "-c:a", "libopus", "-b:a", "64k"][..],
        ),
    ];
    let sauti_bin = env!("CARGO_BIN_EXE_sauti");
    let out = std::env::temp_dir().join("sauti-bench-out.wav");
    println!("decode + resample {SECONDS:.0} s to 16 kHz mono WAV; median of {RUNS} runs; RTF = processing time / audio time");
    println!();
    println!("| input | sauti in-process | sauti CLI (process) | ffmpeg CLI (process) | CLI speed vs ffmpeg |");
    println!("|---|---|---|---|---|");
    for (label, file, encode_args) in inputs {
        let path = data.join(file);
        if !path.exists() {
            generate(&path, encode_args);
        }
        let bytes = std::fs::read(&path).expect("read input");
        let in_process = timing::median(RUNS, || {
            let decoded = audio::load_16k(&bytes, &DecodeLimits::default()).expect("decodes");
            std::hint::black_box(audio::encode_wav_16k(&decoded.samples));
        });
        let cli = timing::median(RUNS, || {
            run(Command::new(sauti_bin)
                .args(["audio", "convert"])
                .arg(&path)
                .arg("-o")
                .arg(&out))
        });
        let ffmpeg = timing::median(RUNS, || {
            run(Command::new("ffmpeg")
                .args(["-loglevel", "error", "-y", "-threads", "1", "-i"])
                .arg(&path)
                .args(["-ar", "16000", "-ac", "1"])
                .arg(&out))
        });
        println!(
            "| {label} | {} | {} | {} | {:.2}× |",
            cell(in_process),
            cell(cli),
            cell(ffmpeg),
            ffmpeg.as_secs_f64() / cli.as_secs_f64()
        );
    }
    println!();
    println!(
        "(speed > 1× means sauti finished first; both CLIs include process start-up and file I/O)"
    );
}

fn cell(d: Duration) -> String {
    format!(
        "{:.1} ms (RTF {:.4})",
        d.as_secs_f64() * 1e3,
        d.as_secs_f64() / SECONDS
    )
}

fn run(command: &mut Command) {
    let status = command.status().expect("spawn");
    assert!(status.success(), "{command:?} failed");
}

/// A minute of speech-like sound: a gliding buzz with formant-ish tones and pauses, plus light noise.
fn generate(path: &Path, encode_args: &[&str]) {
    let source = format!(
        "aevalsrc='0.3*sin(2*PI*(140+40*sin(2*PI*0.7*t))*t)*(0.5+0.5*sin(2*PI*3*t))*gt(sin(2*PI*0.25*t),-0.6)\
         +0.1*sin(2*PI*700*t)+0.05*sin(2*PI*1800*t)+0.01*(random(0)-0.5)|0.28*sin(2*PI*150*t)*(0.5+0.5*sin(2*PI*2.5*t))\
         +0.05*sin(2*PI*2500*t)':s=48000:d={SECONDS}"
    );
    run(Command::new("ffmpeg")
        .args(["-loglevel", "error", "-y", "-f", "lavfi", "-i", &source])
        .args(encode_args)
        .arg(path));
}
