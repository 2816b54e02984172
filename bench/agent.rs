//! The agent's text path: how long the safety screen takes on caller turns of 10 to 1,000 characters (the
//! longest turn allowed), against the whole embedded-engine turn (`converse`: safety, secrets, intent matching,
//! slots and the reply) measured on the same text in the same run, and against the time the embedded voice
//! takes to speak a one-sentence reply.
//!
//! Run: `cargo bench --bench agent`. One thread, median of 21 runs.

use std::sync::Arc;
#[path = "timing.rs"]
mod timing;

use std::time::Duration;

use sauti::dialogue::safety;
use sauti::dialogue::scenario::load;
use sauti::dialogue::{converse, RecordingActions, ScenarioBackend, Session};
use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

const RUNS: usize = 21;
const TURN: &str = "habari daktari mama yangu amekuwa na homa tangu jana usiku na leo asubuhi ameanza kutapika \
na kuharisha sana hataki kula wala kunywa maji na analalamika kichwa kinauma nimempa uji kidogo tu ";

fn main() {
    let scenario =
        load(std::path::Path::new("scenarios/health.toml")).expect("scenarios/health.toml");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let backend = ScenarioBackend::new(Arc::new(RecordingActions::default()));
    let voice = EmbeddedVoice::zuri();
    let speak = timing::median(RUNS, || {
        voice
            .synthesize(
                "Pole sana, nenda kituo cha afya upimwe.",
                &VoiceSettings::default(),
            )
            .expect("synthesises");
    });
    println!("health scenario, one thread, median of {RUNS} runs");
    println!();
    println!("| turn | safety screen | whole engine turn | screen / turn | screen / speaking one sentence ({:.1} ms) |", ms(speak));
    println!("|---|---|---|---|---|");
    for chars in [10, 100, 1_000] {
        let text: String = TURN
            .repeat(chars / TURN.len() + 1)
            .chars()
            .take(chars)
            .collect();
        let screen = timing::median(RUNS, || {
            let _ = safety::screen(&scenario, &text);
        });
        let turn = timing::median(RUNS, || {
            let mut session = Session::default();
            runtime
                .block_on(converse(&scenario, &mut session, &text, &backend, None))
                .expect("answers");
        });
        println!(
            "| {chars} characters | {:.3} ms | {:.3} ms | {:.2} | {:.3} |",
            ms(screen),
            ms(turn),
            screen.as_secs_f64() / turn.as_secs_f64(),
            screen.as_secs_f64() / speak.as_secs_f64()
        );
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
