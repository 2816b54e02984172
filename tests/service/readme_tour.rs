//! The README's API tour runs as written: every file it uploads ships with the project, audio it saves is fetched
//! with `curl -f` (a refusal is never saved as a WAV), and its cloning request succeeds with the shipped sample.

use crate::common;

use std::path::Path;

use common::*;

/// The shell block of the README's "API tour" section.
fn tour() -> String {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = readme
        .split_once("\n## API tour\n")
        .map(|(_, rest)| rest)
        .expect("README.md has an API tour section");
    let block = section
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("\n```"))
        .map(|(block, _)| block)
        .expect("the tour has a sh code block");
    block.to_string()
}

/// Every `@FILE` the tour uploads with curl.
fn uploads(tour: &str) -> Vec<String> {
    let pattern = regex::Regex::new(r#"=@([^\s"';]+)"#).unwrap();
    pattern
        .captures_iter(tour)
        .map(|c| c[1].to_string())
        .collect()
}

#[test]
fn every_file_the_tour_uploads_ships_in_samples() {
    let tour = tour();
    let files = uploads(&tour);
    assert!(files.len() >= 3, "uploads found: {files:?}");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for file in &files {
        assert!(
            file.starts_with("samples/"),
            "{file} is not a shipped sample"
        );
        let path = root.join(file);
        assert!(path.is_file(), "{file} is missing");
        let (rate, channels, seconds) = wav_properties(&std::fs::read(&path).unwrap());
        assert_eq!((rate, channels), (16_000, 1), "{file}");
        assert!((1.0..=30.0).contains(&seconds), "{file}: {seconds} s");
    }
}

#[test]
fn audio_the_tour_saves_is_fetched_with_fail() {
    let fail = regex::Regex::new(r"\s(-[a-zA-Z]*f[a-zA-Z]*|--fail|--fail-with-body)\s").unwrap();
    let mut saving = 0;
    for line in tour()
        .lines()
        .filter(|l| l.contains("curl") && l.contains(" -o "))
    {
        saving += 1;
        assert!(fail.is_match(line), "saves a refusal as audio: {line}");
    }
    assert!(saving > 0, "the tour downloads audio somewhere");
}

#[test]
fn the_tour_clones_a_voice_from_its_sample() {
    let data = temp_dir();
    let server = common::cloning::start(&data, &[]);
    let tour = tour();
    let sample = uploads(&tour)
        .into_iter()
        .find(|f| f.contains("amani"))
        .expect("the tour clones from a sample");
    let bytes = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(&sample)).unwrap();
    let reply = common::cloning::clone(
        &server,
        KEY_A,
        Some(("audio/wav", &bytes)),
        &[("name", "Amani"), ("consent", "Amani agreed on 2026-11-23")],
    );
    assert_eq!(
        reply.status,
        201,
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let voice = reply.json();
    assert_eq!(voice["status"], "ready", "{voice}");
    assert!(voice["speech_seconds"].as_f64().unwrap() >= 6.0, "{voice}");
}
