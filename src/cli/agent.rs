//! `sauti converse`: talk to a scenario in the terminal with the embedded engine, each reply timed and
//! optionally spoken to WAV files.

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context as _;
use clap::Args;

use sauti::audio;
use sauti::dialogue::library::ScenarioLibrary;
use sauti::dialogue::{converse, HttpActions, ScenarioBackend, Session};
use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

/// Converse with a scenario (type a line, read the reply; an empty line or Ctrl-D ends).
#[derive(Debug, Args)]
pub struct ConverseArgs {
    /// `general`, `banking` or `health`.
    #[arg(long, default_value = "general")]
    scenario: String,
    /// Scenario files (the embedded copies stand in for missing ones).
    #[arg(long, default_value = "scenarios")]
    scenarios_dir: PathBuf,
    /// Write each spoken reply to DIR/turn-N.wav (voice baraka).
    #[arg(long, value_name = "DIR")]
    save_audio: Option<PathBuf>,
}

pub fn run(args: ConverseArgs) -> anyhow::Result<()> {
    let dir = args
        .scenarios_dir
        .is_dir()
        .then_some(args.scenarios_dir.as_path());
    let library = ScenarioLibrary::load(dir)?;
    let scenario = library.get(&args.scenario).with_context(|| {
        format!(
            "unknown scenario {:?}; known: {}",
            args.scenario,
            library.ids().join(", ")
        )
    })?;
    if let Some(dir) = &args.save_audio {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let backend = ScenarioBackend::new(Arc::new(HttpActions::new()));
    let voice = EmbeddedVoice::baraka();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let mut session = Session::default();
    let interactive = std::io::stdin().is_terminal();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{} ({}): {}",
        scenario.name, scenario.id, scenario.greeting
    )?;
    let mut lines = std::io::stdin().lock().lines();
    for turn in 1.. {
        if interactive {
            write!(out, "> ")?;
            out.flush()?;
        }
        let Some(line) = lines.next().transpose()? else {
            break;
        };
        let line = line.trim().to_string();
        if line.is_empty() {
            break;
        }
        let started = Instant::now();
        let reply = runtime.block_on(converse(&scenario, &mut session, &line, &backend, None))?;
        let dialogue_ms = started.elapsed().as_secs_f64() * 1000.0;
        let spoken = Instant::now();
        let samples = voice.synthesize(&reply.text, &VoiceSettings::default())?;
        let tts_ms = spoken.elapsed().as_secs_f64() * 1000.0;
        if let Some(dir) = &args.save_audio {
            let path = dir.join(format!("turn-{turn}.wav"));
            std::fs::write(&path, audio::encode_wav_16k(&samples))
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        writeln!(out, "{}", reply.text)?;
        let actions = if reply.actions.is_empty() {
            String::new()
        } else {
            format!(" · actions {}", reply.actions.join(", "))
        };
        writeln!(
            out,
            "  [{} · dialogue {dialogue_ms:.1} ms · speech {tts_ms:.1} ms for {:.1} s{actions}]",
            reply.outcome,
            samples.len() as f64 / f64::from(audio::SAMPLE_RATE)
        )?;
    }
    Ok(())
}
