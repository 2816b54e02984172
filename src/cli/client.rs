//! Commands that talk to a running server: `sauti voices --server`, `sauti jobs wait`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use sauti::tts::catalog::VoiceRegistry;

/// Where the server is and the key to use.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The server's base URL.
    #[arg(long, env = "SAUTI_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// The API key.
    #[arg(long, env = "SAUTI_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
}

impl ServerArgs {
    /// GET a path; the status and the body.
    fn fetch(&self, path: &str) -> anyhow::Result<(u16, Vec<u8>)> {
        let key = self
            .api_key
            .as_deref()
            .context("--api-key (or SAUTI_API_KEY) is needed")?;
        let url = format!("{}{path}", self.server.trim_end_matches('/'));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        runtime.block_on(async {
            let response = sauti::dialogue::actions::http_client(Some(Duration::from_secs(60)))
                .get(&url)
                .header("xi-api-key", key)
                .send()
                .await
                .with_context(|| format!("cannot reach {url}"))?;
            let status = response.status().as_u16();
            let bytes = response
                .bytes()
                .await
                .with_context(|| format!("reading {url}"))?;
            Ok((status, bytes.to_vec()))
        })
    }
}

/// The problem detail of an error body, or the body itself.
fn detail(bytes: &[u8]) -> String {
    serde_json::from_slice::<serde_json::Value>(bytes)
        .ok()
        .and_then(|v| v["detail"].as_str().map(str::to_string))
        .unwrap_or_else(|| String::from_utf8_lossy(bytes).into_owned())
}

/// `sauti voices`.
#[derive(Debug, Args)]
pub struct VoicesArgs {
    /// Ask a running server instead of listing the built-in voices.
    #[arg(long)]
    remote: bool,
    #[command(flatten)]
    server: ServerArgs,
}

pub fn voices(args: VoicesArgs) -> anyhow::Result<()> {
    let voices = if args.remote {
        let (status, bytes) = args.server.fetch("/v1/voices")?;
        if status != 200 {
            bail!("the server answered {status}: {}", detail(&bytes));
        }
        let list: serde_json::Value = serde_json::from_slice(&bytes)?;
        list["voices"].as_array().cloned().unwrap_or_default()
    } else {
        let settings = sauti::config::Settings::load(std::path::Path::new("config"), None)?;
        let local =
            VoiceRegistry::from_settings(&settings, sauti::tts::lexicon::Lexicon::embedded())
                .list(None);
        serde_json::to_value(local)?
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    println!(
        "{:<12} {:<10} {:<8} {:<7} {:<9} description",
        "voice_id", "name", "gender", "locale", "status"
    );
    for v in voices {
        let field = |k: &str| v[k].as_str().unwrap_or("").to_string();
        println!(
            "{:<12} {:<10} {:<8} {:<7} {:<9} {}",
            field("voice_id"),
            field("name"),
            field("gender"),
            field("locale"),
            field("status"),
            field("description")
        );
    }
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// Wait for a synthesis job (a progress bar on a terminal, plain lines otherwise), then save its WAV.
    ///
    /// Example: sauti jobs wait job_… --server http://127.0.0.1:8080 --api-key sk_sauti_… -o story.wav
    Wait {
        /// The job id from the 202 answer.
        job_id: String,
        /// Where to save the audio (default: JOB_ID.wav).
        #[arg(short, long)]
        output: Option<PathBuf>,
        #[command(flatten)]
        server: ServerArgs,
    },
}

pub fn jobs(command: JobsCommand) -> anyhow::Result<()> {
    let JobsCommand::Wait {
        job_id,
        output,
        server,
    } = command;
    let terminal = std::io::stderr().is_terminal();
    let bar = ProgressBar::new(1000);
    if terminal {
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg:10} [{bar:40}] {percent:>3}% {elapsed}")?
                .progress_chars("=> "),
        );
    } else {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut last = String::new();
    let status = loop {
        let (code, bytes) = server.fetch(&format!("/v1/tts/jobs/{job_id}"))?;
        if code != 200 {
            bail!("the server answered {code}: {}", detail(&bytes));
        }
        let job: serde_json::Value = serde_json::from_slice(&bytes)?;
        let status = job["status"].as_str().unwrap_or("unknown").to_string();
        let progress = job["progress"].as_f64().unwrap_or(0.0);
        bar.set_message(status.clone());
        bar.set_position((progress * 1000.0) as u64);
        let line = format!("{job_id}: {status} {:.0}%", progress * 100.0);
        if !terminal && line != last {
            eprintln!("{line}");
            last = line;
        }
        if status == "succeeded" || status == "failed" {
            break job;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    bar.finish_and_clear();
    if status["status"] == "failed" {
        bail!(
            "job {job_id} failed: {}",
            status["error"].as_str().unwrap_or("no reason given")
        );
    }
    let (code, bytes) = server.fetch(&format!("/v1/tts/jobs/{job_id}/audio"))?;
    if code != 200 {
        bail!("the server answered {code}: {}", detail(&bytes));
    }
    let output = output.unwrap_or_else(|| PathBuf::from(format!("{job_id}.wav")));
    std::fs::write(&output, &bytes)
        .with_context(|| format!("cannot write {}", output.display()))?;
    eprintln!(
        "{}: {} bytes, {} s of audio",
        output.display(),
        bytes.len(),
        status["duration_seconds"]
    );
    Ok(())
}
