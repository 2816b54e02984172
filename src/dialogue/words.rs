//! Swahili words for matching: normalisation, verb stems, and forgiving comparison.
//!
//! A verb carries its subject, tense and object as prefixes (`ni-na-ku-penda`, `tu-li-tuma`, `ku-tuma`), so a
//! word is matched by every form it could be: as written, and with each plausible prefix chain removed.

/// Lower-case words with punctuation removed (digits kept; `+` kept at the start of a number).
pub fn tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '+' || c == '\''))
        .map(|w| w.trim_matches(|c| c == '\'' || c == '+'))
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

const SUBJECTS: [&str; 14] = [
    "ni", "u", "a", "tu", "m", "mu", "wa", "i", "li", "ya", "ki", "vi", "zi", "ku",
];
const NEGATIVE_SUBJECTS: [&str; 8] = ["si", "hu", "ha", "hatu", "ham", "hawa", "hai", "hali"];
const TENSES: [&str; 10] = [
    "na", "li", "ta", "me", "ki", "nge", "ngali", "ka", "sha", "ja",
];
const OBJECTS: [&str; 9] = ["ni", "ku", "m", "mw", "tu", "wa", "ji", "ki", "ya"];
/// Verb extensions, longest first.
const EXTENSIONS: [&str; 11] = [
    "ishwa", "iana", "eana", "iwa", "ewa", "ika", "eka", "ana", "ia", "ea", "wa",
];
/// Shortest stem left after stripping (shorter remainders are usually a noun's own letters).
const MIN_STEM: usize = 3;

/// Every form a word could be matched by: itself, and its stem under each plausible prefix chain
/// (subject + tense + optional object, negative subject + optional tense, or the infinitive `ku-`).
pub fn forms(word: &str) -> Vec<String> {
    let add = |rest: &str, stems: &mut Vec<String>| {
        stems.push(rest.to_string());
        for object in OBJECTS {
            if let Some(stem) = rest.strip_prefix(object) {
                stems.push(stem.to_string());
            }
        }
    };
    let mut found: Vec<String> = Vec::new();
    for subject in SUBJECTS {
        let Some(rest) = word.strip_prefix(subject) else {
            continue;
        };
        for tense in TENSES {
            if let Some(rest) = rest.strip_prefix(tense) {
                add(rest, &mut found);
            }
        }
    }
    let negative = NEGATIVE_SUBJECTS.iter().any(|n| word.starts_with(n));
    for prefix in NEGATIVE_SUBJECTS {
        let Some(rest) = word.strip_prefix(prefix) else {
            continue;
        };
        add(rest, &mut found);
        for tense in TENSES {
            if let Some(rest) = rest.strip_prefix(tense) {
                add(rest, &mut found);
            }
        }
    }
    if let Some(rest) = word.strip_prefix("ku") {
        add(rest, &mut found);
    }
    // Negative verbs end in -i (`situmi`, `hatutumi`): the stem ends in -a.
    if negative {
        let endings: Vec<String> = found
            .iter()
            .filter_map(|f| f.strip_suffix('i').map(|stem| format!("{stem}a")))
            .collect();
        found.extend(endings);
    }
    // Verb extensions (applicative -ia/-ea, reciprocal -ana, passive -wa, stative -ika/-eka): `tumia`,
    // `tumiana`, `tumwa` all lead back to `tuma`.
    let mut extended = Vec::new();
    for form in std::iter::once(word.to_string()).chain(found.iter().cloned()) {
        if let Some(base) = EXTENSIONS.iter().find_map(|e| form.strip_suffix(e)) {
            if base.chars().count() >= 2 {
                extended.push(format!("{base}a"));
            }
        }
    }
    found.extend(extended);
    let mut out = vec![word.to_string()];
    for stem in found {
        if stem.chars().count() >= MIN_STEM && !out.contains(&stem) {
            out.push(stem);
        }
    }
    out
}

/// Whether two words match: equal, or (both five letters or more) one letter apart.
pub fn similar(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().min(b.len()) < 5 || a.len().abs_diff(b.len()) > 1 {
        return false;
    }
    within_one_edit(&a, &b)
}

fn within_one_edit(a: &[char], b: &[char]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let (mut i, mut j, mut edits) = (0, 0, 0);
    while i < short.len() && j < long.len() {
        if short[i] == long[j] {
            i += 1;
            j += 1;
            continue;
        }
        edits += 1;
        if edits > 1 {
            return false;
        }
        if short.len() == long.len() {
            i += 1;
        }
        j += 1;
    }
    edits + (long.len() - j) + (short.len() - i) <= 1
}

/// Whether any form of `a` matches any form of `b`.
pub fn words_match(a: &[String], b: &[String]) -> bool {
    a.iter().any(|x| b.iter().any(|y| similar(x, y)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verb_prefixes_reduce_to_the_stem() {
        for word in [
            "ninatuma",
            "nimetuma",
            "tutatuma",
            "kutuma",
            "alituma",
            "nitakutumia",
        ] {
            let f = forms(word);
            assert!(
                f.iter().any(|x| x == "tuma" || x == "tumia"),
                "{word}: {f:?}"
            );
        }
        assert!(forms("nimepoteza").contains(&"poteza".to_string()));
        assert!(forms("imeibiwa").contains(&"ibiwa".to_string()));
        assert!(forms("sitaki").contains(&"taka".to_string()));
        for word in ["kutumiana", "nitakutumia", "alitumwa"] {
            assert!(
                forms(word).contains(&"tuma".to_string()),
                "{word}: {:?}",
                forms(word)
            );
        }
        assert!(forms("imeibiwa").contains(&"iba".to_string()));
        // Nouns keep their letters: no stem shorter than three letters.
        assert_eq!(forms("kadi"), vec!["kadi".to_string()]);
        assert_eq!(forms("salio"), vec!["salio".to_string()]);
    }

    #[test]
    fn misspellings_are_forgiven_in_long_words() {
        assert!(similar("salio", "saliyo"));
        assert!(similar("hospitali", "hospital"));
        assert!(similar("thibitisha", "thibitsha"));
        assert!(!similar("pesa", "pasa"));
        assert!(!similar("mbili", "tatu"));
    }

    #[test]
    fn tokens_drop_punctuation_and_case() {
        assert_eq!(tokens("Habari, Yako?!"), vec!["habari", "yako"]);
        assert_eq!(tokens("+255 712"), vec!["255", "712"]);
    }
}
