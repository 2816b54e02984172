use super::*;

fn word(word: &str, start: f64, end: f64) -> Word {
    Word {
        word: word.into(),
        start,
        end,
    }
}

#[test]
fn a_piece_settles_through_its_last_whole_word() {
    // Read from 1 s (a second of context before), its own second to 2 s, the audio to 2.25 s.
    let words = [
        word("kabla", 0.3, 0.7),
        word("nataka", 1.02, 1.4),
        word("kujua", 1.5, 1.95),
        word("salio", 2.05, 2.2),
    ];
    let (seconds, heard) = settle(&words, 1.0, 2.0, 2.25, false);
    assert_eq!(heard, ["nataka", "kujua"]);
    assert!((seconds - 0.95).abs() < 1e-9, "{seconds}");
}

#[test]
fn a_word_running_into_the_end_of_the_audio_waits_for_the_next_piece() {
    let words = [word("nataka", 1.1, 1.5), word("akaunt", 1.8, 2.25)];
    let (seconds, heard) = settle(&words, 1.0, 2.0, 2.25, false);
    assert_eq!(heard, ["nataka"]);
    // The next piece starts halfway between the last word settled and the one left.
    assert!((seconds - 0.65).abs() < 1e-9, "{seconds}");
}

#[test]
fn a_first_word_running_into_the_end_settles_nothing() {
    let words = [word("nitakapokuwa", 1.02, 2.25)];
    let (seconds, heard) = settle(&words, 1.0, 2.0, 2.25, false);
    assert!(heard.is_empty());
    assert!(seconds < 0.02, "{seconds}");
    // Read longer, every word starting within the piece is settled as read.
    let words = [word("nitakapokuwa", 1.02, 3.1), word("leo", 3.15, 3.25)];
    let (seconds, heard) = settle(&words, 1.0, 3.0, 3.25, true);
    assert_eq!(heard, ["nitakapokuwa"]);
    assert!((seconds - 2.1).abs() < 1e-9, "{seconds}");
}

#[test]
fn a_quiet_piece_settles_whole_and_a_word_placed_a_frame_early_is_kept() {
    let (seconds, heard) = settle(&[], 1.0, 2.0, 2.25, false);
    assert!(heard.is_empty());
    assert!((seconds - 1.0).abs() < 1e-9);
    let (_, heard) = settle(&[word("ndiyo", 0.98, 1.3)], 1.0, 2.0, 2.25, false);
    assert_eq!(heard, ["ndiyo"]);
}

/// A recogniser of a timeline of words: for a stretch of it, the words that sound in it, placed a frame
/// earlier or later depending on the stretch, those running past its end cut short and those starting before it
/// heard as their tail only.
fn recognise(truth: &[Word], from: f64, to: f64, nudge: f64) -> Vec<Word> {
    truth
        .iter()
        .filter(|w| w.end > from && w.start < to)
        .map(|w| {
            let (start, end) = (w.start.max(from), w.end.min(to));
            let kept = ((end - start) / (w.end - w.start) * w.word.len() as f64).ceil() as usize;
            let text: String = w.word.chars().take(kept.max(1)).collect();
            word(&text, start - from + nudge, end - from + nudge)
        })
        .collect()
}

#[test]
fn pieces_and_the_rest_hear_every_word_once_and_whole() {
    let sentence =
        "habari nataka kujua salio la akaunti yangu ya akiba leo asubuhi tafadhali sana kwa haraka";
    for (case, pace) in [0.18, 0.31, 0.42, 0.55, 0.7].into_iter().enumerate() {
        // Words of different lengths, with pauses between some.
        let mut at = 0.2;
        let truth: Vec<Word> = sentence
            .split(' ')
            .enumerate()
            .map(|(i, w)| {
                let length = pace * (0.5 + w.len() as f64 / 6.0);
                let spoken = word(w, at, at + length);
                at += length + if i % 3 == case % 3 { 0.25 } else { 0.04 };
                spoken
            })
            .collect();
        let total = ((at + 0.3) * RATE as f64) as usize;
        let piece = RATE;
        let mut settled = Settled::default();
        let (mut round, mut longer) = (0, false);
        loop {
            let length = if longer { 2 * piece } else { piece };
            if total < settled.done + length + AHEAD {
                break;
            }
            let start = settled.done.saturating_sub(CONTEXT);
            let end = settled.done + length + AHEAD;
            let seconds = |samples: usize| samples as f64 / RATE as f64;
            let from = seconds(settled.done - start);
            let nudge = [0.02, -0.02, 0.0][round % 3];
            round += 1;
            let heard = recognise(&truth, seconds(start), seconds(end), nudge);
            let until = from + seconds(length);
            let (advance, words) = settle(&heard, from, until, seconds(end - start), longer);
            let advance = (advance * RATE as f64).round() as usize;
            longer = advance == 0 && !longer;
            settled.done += advance;
            for w in words {
                settled.heard = format!("{} {w}", settled.heard).trim().to_string();
            }
        }
        assert!(round >= 3, "{round}");
        let start = settled.done.saturating_sub(CONTEXT);
        let from = (settled.done - start) as f64 / RATE as f64;
        let last = crate::asr::Transcript::from_words(
            recognise(
                &truth,
                start as f64 / RATE as f64,
                total as f64 / RATE as f64,
                -0.02,
            ),
            0.5,
        );
        let whole: Vec<&str> = std::iter::once(settled.heard.as_str())
            .chain(rest(&last, from))
            .collect();
        assert_eq!(whole.join(" "), sentence, "pace {pace}");
    }
}
