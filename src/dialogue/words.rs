//! Swahili words for matching: normalisation, verb stems, and forgiving comparison.
//!
//! A verb carries its subject, tense and object as prefixes (`ni-na-ku-penda`, `tu-li-tuma`, `ku-tuma`), so a
//! word is matched by every form it could be: as written, and with each plausible prefix chain removed. Each form
//! remembers whether it came from a negative verb (`ha-pumu-i`, `si-ju-i`, `ha-ja-amka`): the safety signs tell
//! "he is not breathing" from "he is breathing".

/// Lower-case words with punctuation removed (digits kept; apostrophes dropped, so `ng'ata` and `ngata` are one
/// word; `+` kept at the start of a number).
pub fn tokens(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '+' || c == '\'' || c == '’'))
        .map(|w| {
            w.trim_matches(|c| c == '+')
                .chars()
                .filter(|c| *c != '\'' && *c != '’')
                .collect::<String>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

/// One reading of a word: a stem, and whether the word was a negative verb.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// The word or a stem of it.
    pub stem: String,
    /// Whether this reading is a negative verb (`hapumui` → `pumua`, negative).
    pub negative: bool,
}

const SUBJECTS: [&str; 14] = [
    "ni", "u", "a", "tu", "m", "mu", "wa", "i", "li", "ya", "ki", "vi", "zi", "ku",
];
const NEGATIVE_SUBJECTS: [&str; 10] = [
    "si", "hu", "ha", "hatu", "ham", "hawa", "hai", "hali", "haya", "haku",
];
const TENSES: [&str; 10] = [
    "na", "li", "ta", "me", "ki", "nge", "ngali", "ka", "sha", "ja",
];
/// Tenses after a negative subject (`ha-ku-pumua`, `ha-ja-amka`, `ha-ta-kuja`, `si-ngependa`).
const NEGATIVE_TENSES: [&str; 5] = ["ku", "ja", "ta", "nge", "ngali"];
/// Object markers (`ji-`, the reflexive, is not one: `jifungua` "give birth" is not `fungua` "open").
const OBJECTS: [&str; 11] = [
    "ni", "ku", "m", "mu", "mw", "tu", "wa", "ki", "ya", "i", "li",
];
/// Verb extensions, longest first: `tolewa` → `toa`, `tumiwa` → `tuma`.
const EXTENSIONS: [&str; 13] = [
    "ishwa", "iana", "eana", "lewa", "liwa", "iwa", "ewa", "ika", "eka", "ana", "ia", "ea", "wa",
];
/// Shortest stem left after stripping (shorter remainders are usually a noun's own letters).
const MIN_STEM: usize = 3;

/// Every reading of a word: itself (not negative), and its stem under each plausible prefix chain (subject +
/// tense + optional object, negative subject + optional tense, the infinitive `ku-` or the negative
/// infinitive `kuto-`), with verb extensions, negative `-i` and subjunctive `-e` endings undone and the
/// locative `-ni` of a noun removed.
pub fn analyze(word: &str) -> Vec<Form> {
    analyze_with(word, true)
}

/// The readings of a word written in a pattern (a safety sign): its prefixes are stripped, but not its object
/// marker or extensions, which carry meaning there (`jikata`, "cut oneself", is not `kata`, "cut").
pub fn analyze_pattern(word: &str) -> Vec<Form> {
    analyze_with(word, false)
}

fn analyze_with(word: &str, deep: bool) -> Vec<Form> {
    let mut found: Vec<Form> = Vec::new();
    let add = |rest: &str, negative: bool, found: &mut Vec<Form>| {
        found.push(Form {
            stem: rest.to_string(),
            negative,
        });
        if !deep {
            return;
        }
        for object in OBJECTS {
            if let Some(stem) = rest.strip_prefix(object) {
                found.push(Form {
                    stem: stem.to_string(),
                    negative,
                });
            }
        }
    };
    for subject in SUBJECTS {
        let Some(rest) = word.strip_prefix(subject) else {
            continue;
        };
        for tense in TENSES {
            if let Some(rest) = rest.strip_prefix(tense) {
                add(rest, false, &mut found);
            }
        }
        // Subjunctive and habitual forms carry no tense: `nijiue`, `tuende`.
        if rest.ends_with('e') {
            add(rest, false, &mut found);
        }
    }
    for prefix in NEGATIVE_SUBJECTS {
        let Some(rest) = word.strip_prefix(prefix) else {
            continue;
        };
        add(rest, true, &mut found);
        for tense in NEGATIVE_TENSES {
            if let Some(rest) = rest.strip_prefix(tense) {
                add(rest, true, &mut found);
            }
        }
    }
    // First person, contracted: `nataka` (ni-na-taka), `ntajiua` (ni-ta-jiua), `nshakula` (ni-sha-kula).
    for contracted in ["na", "nta", "nsha", "nme"] {
        if let Some(rest) = word.strip_prefix(contracted) {
            add(rest, false, &mut found);
        }
    }
    // `hu-` also marks habits (`hujikata`, "she cuts herself"): those readings are affirmative too.
    if let Some(rest) = word.strip_prefix("hu") {
        add(rest, false, &mut found);
    }
    if let Some(rest) = word.strip_prefix("kuto") {
        add(rest, true, &mut found);
    }
    if let Some(rest) = word.strip_prefix("ku") {
        add(rest, false, &mut found);
    }
    // Negative verbs end in -i (`situmi`, `hapumui`) and subjunctives in -e (`nijiue`): the stem ends in -a.
    let endings: Vec<Form> = found
        .iter()
        .filter_map(|f| {
            let stem = if f.negative {
                f.stem.strip_suffix('i')
            } else {
                f.stem.strip_suffix('e')
            }?;
            Some(Form {
                stem: format!("{stem}a"),
                negative: f.negative,
            })
        })
        .collect();
    found.extend(endings);
    // Verb extensions (applicative -ia/-ea, reciprocal -ana, passive -wa, stative -ika/-eka): `tumia`,
    // `tumiana`, `tumwa` all lead back to `tuma`.
    let own = Form {
        stem: word.to_string(),
        negative: false,
    };
    let mut extended = Vec::new();
    for form in std::iter::once(&own).chain(found.iter()).filter(|_| deep) {
        if let Some(base) = EXTENSIONS.iter().find_map(|e| form.stem.strip_suffix(e)) {
            if base.chars().count() >= 2 {
                extended.push(Form {
                    stem: format!("{base}a"),
                    negative: form.negative,
                });
            }
        }
    }
    found.extend(extended);
    // The locative `-ni` of a noun: `kooni` → `koo`, `majini` → `maji`, `kifuani` → `kifua`.
    if let Some(noun) = word.strip_suffix("ni").filter(|_| deep) {
        if noun.chars().count() >= MIN_STEM {
            found.push(Form {
                stem: noun.to_string(),
                negative: false,
            });
        }
    }
    let mut out = vec![own];
    for form in found {
        if form.stem.chars().count() >= MIN_STEM && !out.contains(&form) {
            out.push(form);
        }
    }
    out
}

/// Every stem a word could be matched by, whatever its polarity: itself first.
pub fn forms(word: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for form in analyze(word) {
        if !out.contains(&form.stem) {
            out.push(form.stem);
        }
    }
    out
}

/// Whether two words match: equal, or one letter missing or extra (five letters or more), or one letter wrong
/// (six letters or more).
pub fn similar(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let ascii = a.is_ascii() && b.is_ascii();
    let (la, lb) = if ascii {
        (a.len(), b.len())
    } else {
        (a.chars().count(), b.chars().count())
    };
    // A letter missing or extra from five letters on, a wrong letter from six (`cheka` is not `cheza`).
    let shortest = if la == lb { 6 } else { 5 };
    if la.min(lb) < shortest || la.abs_diff(lb) > 1 {
        return false;
    }
    if ascii {
        return within_one_edit(a.as_bytes(), b.as_bytes());
    }
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    within_one_edit(&a, &b)
}

fn within_one_edit<T: PartialEq>(a: &[T], b: &[T]) -> bool {
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
