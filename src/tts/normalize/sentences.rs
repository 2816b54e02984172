//! Sentence and clause splitting for long texts (jobs synthesise sentence by sentence).

/// Longest piece of text any voice synthesises at once: the unit of work that is spread over workers,
/// checked for cancellation, and whose cost bounds every request's latency to stop.
pub const PIECE_CHARS: usize = 400;

/// The pieces a text is synthesised in: its sentences, and any sentence longer than `max_chars` (a text without
/// punctuation, say) cut at clause marks and then at spaces, so that no piece is longer than `max_chars`.
pub fn split_pieces(text: &str, max_chars: usize) -> Vec<String> {
    let mut pieces = Vec::new();
    for sentence in split_sentences(text) {
        if sentence.chars().count() <= max_chars {
            pieces.push(sentence);
        } else {
            pieces.extend(split_clauses(&sentence, max_chars));
        }
    }
    pieces
}

/// Words that end in a full stop without ending a sentence.
const ABBREVIATIONS: &[&str] = &[
    "k.m", "n.k", "dkt", "dk", "bw", "bi", "mh", "mhe", "prof", "mt", "na", "s.l.p", "sh", "shs",
];

/// Split text into sentences at `.`, `!`, `?` and `…`, but not after abbreviations, initials or inside
/// numbers. Each sentence keeps its final punctuation (which carries the intonation).
pub fn split_sentences(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut sentences = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < chars.len() {
        if matches!(chars[i], '.' | '!' | '?' | '…') {
            let mut end = i + 1;
            while end < chars.len()
                && matches!(chars[end], '.' | '!' | '?' | '…' | '"' | '\'' | ')')
            {
                end += 1;
            }
            let next = chars[end..].iter().find(|c| !c.is_whitespace());
            let at_space = end == chars.len() || chars[end].is_whitespace();
            let continues_lowercase = next.is_some_and(|c| c.is_lowercase());
            let is_stop = chars[i] == '.' && i + 1 == end;
            if at_space
                && !(is_stop && (ends_with_abbreviation(&chars[start..i]) || continues_lowercase))
            {
                push_trimmed(&mut sentences, &chars[start..end]);
                start = end;
            }
            i = end;
        } else {
            i += 1;
        }
    }
    push_trimmed(&mut sentences, &chars[start..]);
    sentences
}

fn ends_with_abbreviation(before: &[char]) -> bool {
    let word: String = before
        .iter()
        .rev()
        .take_while(|c| !c.is_whitespace())
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let word = word.trim_start_matches(['(', '"', '\'']).to_lowercase();
    let initial = word.chars().count() == 1 && word.chars().all(char::is_alphabetic);
    initial || ABBREVIATIONS.contains(&word.as_str())
}

fn push_trimmed(out: &mut Vec<String>, chars: &[char]) {
    let s: String = chars.iter().collect();
    let s = s.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
}

/// Split one sentence into pieces of at most `max_chars`, preferring clause boundaries (`,` `;` `:`), then
/// spaces. Short sentences come back whole.
pub fn split_clauses(sentence: &str, max_chars: usize) -> Vec<String> {
    let max_chars = max_chars.max(1);
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    for clause in sentence.split_inclusive([',', ';', ':']) {
        for part in split_long(clause.trim(), max_chars) {
            if !current.is_empty() && current.chars().count() + 1 + part.chars().count() > max_chars
            {
                pieces.push(std::mem::take(&mut current));
            }
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(&part);
        }
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// Break a clause longer than `max_chars` at spaces (or anywhere, for a single enormous word).
fn split_long(clause: &str, max_chars: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut current = String::new();
    for word in clause.split_whitespace() {
        let mut word = word.to_string();
        if word.chars().count() > max_chars && !current.is_empty() {
            // The words before an enormous one go first: order is kept.
            out.push(std::mem::take(&mut current));
        }
        while word.chars().count() > max_chars {
            let head: String = word.chars().take(max_chars).collect();
            word = word.chars().skip(max_chars).collect();
            out.push(head);
        }
        if !current.is_empty() && current.chars().count() + 1 + word.chars().count() > max_chars {
            out.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(&word);
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_at_real_ends_only() {
        let text = "Habari Dkt. Juma! Bei ni TSh 3.50 leo. Je, umefika? Ndiyo, k.m. jana. Asante";
        assert_eq!(
            split_sentences(text),
            vec![
                "Habari Dkt. Juma!",
                "Bei ni TSh 3.50 leo.",
                "Je, umefika?",
                "Ndiyo, k.m. jana.",
                "Asante"
            ]
        );
        assert_eq!(
            split_sentences("J. K. Nyerere alizaliwa."),
            vec!["J. K. Nyerere alizaliwa."]
        );
        assert!(split_sentences("   ").is_empty());
    }

    #[test]
    fn long_sentences_split_at_clauses_then_spaces() {
        let pieces = split_clauses("moja mbili tatu, nne tano sita; saba nane", 20);
        assert_eq!(
            pieces,
            vec!["moja mbili tatu,", "nne tano sita;", "saba nane"]
        );
        assert!(split_clauses(&"neno ".repeat(100), 50)
            .iter()
            .all(|p| p.chars().count() <= 50));
        assert_eq!(split_clauses(&"a".repeat(25), 10).len(), 3);
    }
}
