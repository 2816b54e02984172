//! ffmpeg as a second decoder: a static build from PyPI (`tools/ffmpeg.sh`), or `SAUTI_TEST_FFMPEG`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::OnceLock;

pub fn ffmpeg() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Ok(path) = std::env::var("SAUTI_TEST_FFMPEG") {
            return path;
        }
        let root = env!("CARGO_MANIFEST_DIR");
        let output = Command::new("bash")
            .arg(format!("{root}/tools/ffmpeg.sh"))
            .output()
            .expect("bash runs");
        assert!(
            output.status.success(),
            "tools/ffmpeg.sh: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap().trim().to_string()
    })
}

/// What ffmpeg makes of `bytes`: rate, channels and seconds of decoded audio. Raw formats need their
/// demuxer named (`input` = `-f s16le -ar 16000` and the like).
pub fn probe(bytes: &[u8], input: &[&str]) -> (u32, u16, f64) {
    let mut child = Command::new(ffmpeg())
        .args(["-hide_banner", "-nostdin"])
        .args(input)
        .args([
            "-i",
            "pipe:0",
            "-f",
            "s16le",
            "-acodec",
            "pcm_s16le",
            "pipe:1",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ffmpeg runs");
    let mut stdin = child.stdin.take().unwrap();
    let owned = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&owned));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let log = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{log}");
    let stream = log
        .lines()
        .find(|l| l.contains("Stream #0:0") && l.contains("Audio:"))
        .unwrap_or_else(|| panic!("no audio stream: {log}"));
    let rate: u32 = stream
        .split(", ")
        .find_map(|p| p.strip_suffix(" Hz"))
        .unwrap_or_else(|| panic!("{stream}"))
        .parse()
        .unwrap();
    let channels = match () {
        _ if stream.contains(", mono") => 1,
        _ if stream.contains(", stereo") => 2,
        _ => panic!("{stream}"),
    };
    let seconds = output.stdout.len() as f64 / 2.0 / f64::from(channels) / f64::from(rate);
    (rate, channels, seconds)
}
