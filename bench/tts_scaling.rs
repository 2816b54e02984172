//! Synthesis cost per character as texts grow: 100, 1,000 and 10,000 characters of Swahili, with punctuation
//! (many short phrases) and without (one phrase the length of the text, the shape that once made the pitch
//! contour quadratic), at the normal rate and at the slowest `speaking_rate` (0.25, four times the frames).
//! The reference is the same engine's 100-character text in the same run: a cost per character that stays near
//! 1.00× of it as the text grows is linear; a quadratic path shows as ~10× and ~100×.
//!
//! Run: `cargo bench --bench tts_scaling`. One thread, median of 3 runs (10,000 characters at rate 0.25 is about
//! a quarter of an hour of audio).

#[path = "timing.rs"]
mod timing;

use sauti::tts::{EmbeddedVoice, Synthesizer, VoiceSettings};

const RUNS: usize = 3;
const WORDS: &str =
    "Habari ya asubuhi karibu kwenye huduma ya benki yetu salio lako ni shilingi elfu kumi na \
mbili ukitaka kutuma pesa sema kiasi na namba ya simu ya mpokeaji tawi letu liko wazi ";

fn text_of(chars: usize, punctuated: bool) -> String {
    let mut text = String::new();
    let mut words = WORDS.split_whitespace().cycle().enumerate();
    while text.chars().count() < chars {
        let (i, word) = words.next().expect("cycles");
        text.push_str(word);
        text.push_str(if punctuated && i % 9 == 8 { ". " } else { " " });
    }
    text.chars()
        .take(chars)
        .collect::<String>()
        .trim()
        .to_string()
}

fn main() {
    let voice = EmbeddedVoice::zuri();
    println!("embedded voice zuri, one thread, median of {RUNS} runs");
    println!();
    println!("| text | speaking_rate | characters | time | µs per character | vs 100 characters |");
    println!("|---|---|---|---|---|---|");
    for punctuated in [true, false] {
        for rate in [1.0, 0.25] {
            let settings = VoiceSettings {
                speaking_rate: rate,
                ..VoiceSettings::default()
            };
            let mut reference = None;
            for chars in [100, 1_000, 10_000] {
                let text = text_of(chars, punctuated);
                let time = timing::median(RUNS, || {
                    voice.synthesize(&text, &settings).expect("synthesises");
                });
                let per_char = time.as_secs_f64() * 1e6 / chars as f64;
                let base = *reference.get_or_insert(per_char);
                println!(
                    "| {} | {rate} | {chars} | {:.1} ms | {per_char:.1} | {:.2}× |",
                    if punctuated {
                        "punctuated"
                    } else {
                        "no punctuation"
                    },
                    time.as_secs_f64() * 1e3,
                    per_char / base
                );
            }
        }
    }
}
