//! `sauti stt eval MANIFEST`: recognition measured on recordings with reference transcripts.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::Args;

use sauti::asr::eval::{comparable, read_manifest, Errors};
use sauti::asr::DEFAULT_LANGUAGE;
use sauti::audio::{self, DecodeLimits};

/// Arguments of `sauti stt eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The manifest (see `sauti stt eval --help`).
    manifest: PathBuf,
    /// Language spoken in the recordings (ISO 639-1); it picks the model as the server would.
    #[arg(long, default_value = DEFAULT_LANGUAGE)]
    language: String,
    /// A Whisper model folder instead of the configured asr.model (under models.dir).
    #[arg(long, value_name = "DIR")]
    model: Option<PathBuf>,
    /// A configuration file (as `serve --config`): models.dir, models.onnxruntime, asr.*, [[asr.ctc]] …
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print JSON (per file and overall) instead of a table.
    #[arg(long)]
    json: bool,
}

/// One measured recording.
#[derive(Debug, serde::Serialize)]
struct Row {
    audio: String,
    reference: String,
    hypothesis: String,
    wer: f64,
    cer: f64,
    seconds: f64,
    rtf: f64,
}

pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    let language = super::stt::checked_language(&args.language)?;
    let settings = super::stt::settings_with(args.config.as_deref(), args.model)?;
    let items = read_manifest(&args.manifest).map_err(anyhow::Error::msg)?;
    let recognizer = sauti::asr::load(&settings)
        .map_err(|why| anyhow::anyhow!("speech recognition is not available: {why}"))?;
    let (mut rows, mut total, mut audio_seconds, mut busy_seconds) =
        (Vec::new(), Errors::default(), 0.0, 0.0);
    for item in &items {
        let bytes = std::fs::read(&item.audio)
            .with_context(|| format!("cannot read {}", item.audio.display()))?;
        let clip = audio::load_16k(&bytes, &DecodeLimits::default())
            .with_context(|| format!("{} cannot be decoded", item.audio.display()))?;
        let started = Instant::now();
        let transcript = recognizer.transcribe(&clip.samples, &language)?;
        let busy = started.elapsed().as_secs_f64();
        let (reference, hypothesis) = (comparable(&item.reference), comparable(&transcript.text));
        let errors = Errors::of(&reference, &hypothesis);
        total = total + errors;
        audio_seconds += clip.duration_seconds();
        busy_seconds += busy;
        rows.push(Row {
            audio: item.audio.display().to_string(),
            reference,
            hypothesis,
            wer: errors.wer(),
            cer: errors.cer(),
            seconds: clip.duration_seconds(),
            rtf: busy / clip.duration_seconds().max(1e-9),
        });
    }
    let rtf = busy_seconds / audio_seconds.max(1e-9);
    if args.json {
        let report = serde_json::json!({
            "files": rows,
            "overall": {
                "files": rows.len(), "wer": total.wer(), "cer": total.cer(),
                "words": total.words, "audio_seconds": audio_seconds, "rtf": rtf,
            },
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!("| audio | seconds | WER | CER | RTF | reference | hypothesis |");
    println!("|---|---|---|---|---|---|---|");
    for row in &rows {
        println!(
            "| {} | {:.1} | {:.3} | {:.3} | {:.3} | {} | {} |",
            row.audio, row.seconds, row.wer, row.cer, row.rtf, row.reference, row.hypothesis
        );
    }
    println!(
        "| overall ({} files, {} words) | {audio_seconds:.1} | {:.3} | {:.3} | {rtf:.3} | | |",
        rows.len(),
        total.words,
        total.wer(),
        total.cer()
    );
    Ok(())
}
