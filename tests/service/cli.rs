//! The command line as users and operators run it: the real binary, real files, exit codes and stderr.
//! Commands that run models (`stt`, neural `tts`): `tests/service/cli_models.rs`.

use crate::common;

use std::path::{Path, PathBuf};

use common::cli::{assert_one_line_error, audio_fixture as fixture, sauti, stdout, wav_properties};

#[test]
fn audio_info_prints_the_documented_json() {
    let output = sauti(&[
        "audio",
        "info",
        &fixture("speech-opus-48000-1ch-2500ms.ogg"),
    ]);
    assert!(output.status.success(), "{output:?}");
    let info: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(info["format"], "ogg");
    assert_eq!(info["codec"], "opus");
    assert_eq!(info["sample_rate"], 48_000);
    assert_eq!(info["channels"], 1);
    assert!(
        (info["duration_seconds"].as_f64().unwrap_or(0.0) - 2.5).abs() < 0.03,
        "{info}"
    );
    assert!(
        (info["speech_seconds"].as_f64().unwrap_or(0.0) - 1.4).abs() < 0.1,
        "{info}"
    );
    assert!(info["peak_dbfs"].as_f64().unwrap_or(0.0) < 0.0);
    assert!(info["rms_dbfs"].as_f64().unwrap_or(0.0) < info["peak_dbfs"].as_f64().unwrap_or(0.0));
}

#[test]
fn audio_convert_writes_16k_mono_wav() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out: PathBuf = dir.path().join("out.wav");
    let output = sauti(&[
        "audio",
        "convert",
        &fixture("tone-mp3-44100-2ch-1000ms.mp3"),
        "-o",
        &out.display().to_string(),
    ]);
    assert!(output.status.success(), "{output:?}");
    let (rate, channels, seconds) = wav_properties(&out);
    assert_eq!((rate, channels), (16_000, 1));
    assert!((seconds - 1.0).abs() < 0.03, "{seconds} s");
}

#[test]
fn bad_audio_gets_one_line_and_a_failing_exit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let junk = dir.path().join("junk.wav");
    std::fs::write(&junk, b"this is not a wav file at all").expect("write");
    assert_one_line_error(
        &sauti(&["audio", "info", &junk.display().to_string()]),
        "unrecognised audio format",
    );
    assert_one_line_error(
        &sauti(&["audio", "info", &fixture("unsupported-aac.m4a")]),
        "unsupported audio format",
    );
    assert_one_line_error(
        &sauti(&["audio", "info", "/no/such/file.wav"]),
        "cannot read",
    );
    let out = dir.path().join("x.wav").display().to_string();
    assert_one_line_error(
        &sauti(&["audio", "convert", &junk.display().to_string(), "-o", &out]),
        "unrecognised",
    );
    assert!(!Path::new(&out).exists(), "nothing written on failure");
}

#[test]
fn tts_speaks_to_a_wav_file_with_either_voice() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut durations = Vec::new();
    for (voice, rate) in [("zuri", "1.0"), ("baraka", "1.0"), ("baraka", "2.0")] {
        let out = dir.path().join(format!("{voice}-{rate}.wav"));
        let output = sauti(&[
            "tts",
            "Habari ya asubuhi, karibu.",
            "-o",
            &out.display().to_string(),
            "--voice",
            voice,
            "--speaking-rate",
            rate,
        ]);
        assert!(output.status.success(), "{output:?}");
        let (sample_rate, channels, seconds) = wav_properties(&out);
        assert_eq!((sample_rate, channels), (16_000, 1));
        durations.push(seconds);
    }
    assert!(durations[0] > 0.8, "{durations:?}");
    assert!(
        durations[2] < 0.6 * durations[1],
        "speaking rate 2.0: {durations:?}"
    );
    let out = dir.path().join("x.wav").display().to_string();
    assert_one_line_error(
        &sauti(&["tts", "Habari", "-o", &out, "--voice", "nobody"]),
        "unknown voice",
    );
    assert_one_line_error(
        &sauti(&["tts", "Habari", "-o", &out, "--speaking-rate", "9"]),
        "speaking_rate",
    );
    assert_one_line_error(&sauti(&["tts", "   ", "-o", &out]), "empty");
}

#[test]
fn text_commands_show_the_reading() {
    let normalized = sauti(&["text", "normalize", "Bei ni TSh 5,000 saa 13:15."]);
    assert_eq!(
        stdout(&normalized).trim(),
        "Bei ni shilingi elfu tano saa saba na robo mchana."
    );
    let negative = sauti(&["text", "normalize", "-5"]);
    assert_eq!(stdout(&negative).trim(), "hasi tano");
    let phonemes = sauti(&["text", "phonemes", "Mbwa wangu yuko wapi?"]);
    assert_eq!(stdout(&phonemes).trim(), "ˈm̩.bwa ˈwa.ᵑgu ˈju.kɔ ˈwa.pi ↗‖");
}

#[test]
fn help_lists_every_command_with_examples() {
    let help = stdout(&sauti(&["--help"]));
    for command in ["audio", "text", "tts"] {
        assert!(help.contains(command), "{help}");
    }
    assert!(stdout(&sauti(&["tts", "--help"])).contains("Example"));
}

#[test]
fn converse_talks_to_a_scenario_line_by_line() {
    use std::io::Write;
    let dir = common::temp_dir();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["converse", "--scenario", "banking", "--save-audio"])
        .arg(dir.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"nataka kutuma pesa\nelfu tano kwa 0712345678\nhapana\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    for needle in [
        "Benki",
        "kiasi",
        "Nithibitishe",
        "nimesitisha",
        "[send_money · dialogue",
        "ms for ",
    ] {
        assert!(text.contains(needle), "{needle:?} in\n{text}");
    }
    let (rate, channels, seconds) =
        common::wav_properties(&std::fs::read(dir.path().join("turn-2.wav")).unwrap());
    assert_eq!((rate, channels), (16_000, 1));
    assert!(seconds > 1.0);
}

#[test]
fn voices_and_jobs_wait_against_a_server() {
    let listed = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("voices")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(text.contains("zuri") && text.contains("baraka"), "{text}");

    let data = common::temp_dir();
    let server = common::Server::start(data.path(), &[]);
    let job = common::post_json(
        &server.url("/v1/tts/jobs"),
        Some(common::KEY_A),
        &serde_json::json!({ "text": "Karibu sana. Hii ni kazi ndefu kidogo." }),
    );
    let id = job.json()["job_id"].as_str().unwrap().to_string();
    let out = data.path().join("job.wav");
    let waited = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args([
            "jobs",
            "wait",
            &id,
            "--server",
            &server.base,
            "--api-key",
            common::KEY_A,
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&waited.stderr);
    assert!(waited.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("{id}: succeeded 100%")),
        "{stderr}"
    );
    let (rate, _, seconds) = common::wav_properties(&std::fs::read(&out).unwrap());
    assert_eq!(rate, 16_000);
    assert!(seconds > 1.0);

    let remote = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args([
            "voices",
            "--remote",
            "--server",
            &server.base,
            "--api-key",
            "wrong-key-0000",
        ])
        .output()
        .unwrap();
    assert!(!remote.status.success());
    assert!(String::from_utf8_lossy(&remote.stderr).contains("401"));
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .args([
            "jobs",
            "wait",
            "job_nope",
            "--server",
            &server.base,
            "--api-key",
            common::KEY_A,
        ])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("404"));
}

#[test]
fn help_lists_every_command() {
    let help = std::process::Command::new(env!("CARGO_BIN_EXE_sauti"))
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&help.stdout);
    for command in [
        "serve", "keys", "audio", "text", "tts", "scenario", "converse", "voices", "jobs", "stt",
    ] {
        assert!(
            text.contains(&format!("  {command}")),
            "{command} in\n{text}"
        );
    }
}

#[test]
fn tts_reads_a_text_file_the_same_as_the_argument() {
    let dir = common::temp_dir();
    let text = "Habari ya asubuhi.\nKaribu Tanzania. Asante sana!\n";
    let file = dir.path().join("story.txt");
    std::fs::write(&file, text).unwrap();
    let (from_file, from_arg) = (dir.path().join("file.wav"), dir.path().join("arg.wav"));
    let a = sauti(&[
        "tts",
        "--file",
        file.to_str().unwrap(),
        "-o",
        from_file.to_str().unwrap(),
    ]);
    let b = sauti(&["tts", text, "-o", from_arg.to_str().unwrap()]);
    assert!(a.status.success() && b.status.success());
    assert_eq!(
        std::fs::read(&from_file).unwrap(),
        std::fs::read(&from_arg).unwrap()
    );
    let both = sauti(&["tts", "x", "--file", file.to_str().unwrap(), "-o", "y.wav"]);
    assert!(!both.status.success());
}
