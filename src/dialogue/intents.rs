//! Intent matching for the scenario engine: keywords and example phrases compared word by word, each word by
//! all its verb forms and forgiving one wrong letter in long words.

use super::scenario::{CompiledIntent, Intent, Scenario};
use super::words::{analyze_pattern, forms, tokens, words_match};

/// Words too common to tell intents apart.
const STOPWORDS: [&str; 48] = [
    "ni",
    "na",
    "ya",
    "wa",
    "za",
    "la",
    "kwa",
    "je",
    "tafadhali",
    "nataka",
    "ningependa",
    "naomba",
    "naweza",
    "unaweza",
    "yangu",
    "langu",
    "wangu",
    "changu",
    "zangu",
    "yako",
    "lako",
    "wako",
    "mimi",
    "wewe",
    "hii",
    "hiyo",
    "huu",
    "kuhusu",
    "gani",
    "nini",
    "jinsi",
    "namna",
    "sana",
    "pia",
    "au",
    "kuna",
    "the",
    "a",
    "i",
    "want",
    "please",
    "my",
    "to",
    "is",
    "of",
    "and",
    "me",
    "you",
];

/// Score at or above which an intent is taken.
pub const THRESHOLD: f32 = 0.45;

/// Verbs of wanting and asking (`tunataka`, `naomba`, `nahitaji`): in every kind of request, so they tell
/// intents apart no better than stopwords.
const STOP_STEMS: [&str; 4] = ["taka", "omba", "hitaji", "weza"];

/// Words callers use for the same thing (English, Sheng, spelling), read as the Swahili word the scenarios use.
const SYNONYMS: [(&str, &str); 22] = [
    ("account", "akaunti"),
    ("acc", "akaunti"),
    ("card", "kadi"),
    ("balance", "salio"),
    ("money", "pesa"),
    ("hela", "pesa"),
    ("doo", "pesa"),
    ("chapaa", "pesa"),
    ("mkwanja", "pesa"),
    ("ganji", "pesa"),
    ("mulla", "pesa"),
    ("fedha", "pesa"),
    ("clinic", "kliniki"),
    ("kliniki", "kliniki"),
    ("appointment", "miadi"),
    ("appointments", "miadi"),
    ("pressure", "presha"),
    ("bp", "presha"),
    ("doctor", "daktari"),
    ("dokta", "daktari"),
    ("daktari", "daktari"),
    ("hospital", "hospitali"),
];

/// A turn's words with synonyms read as the scenario's words.
fn canonical(text: &str) -> Vec<String> {
    tokens(text)
        .into_iter()
        .map(|w| {
            SYNONYMS
                .iter()
                .find(|(from, _)| *from == w)
                .map_or(w, |(_, to)| (*to).to_string())
        })
        .collect()
}

/// A turn's content words (stopwords and verbs of wanting left out), each as its forms.
pub fn content(text: &str) -> Vec<Vec<String>> {
    canonical(text)
        .into_iter()
        .filter(|w| !STOPWORDS.contains(&w.as_str()))
        .map(|w| forms(&w))
        .filter(|f| !f.iter().any(|form| STOP_STEMS.contains(&form.as_str())))
        .collect()
}

/// A keyword's words, each with the readings of a pattern; a word written `=word` is that word only, as said
/// (`=ananiomba` is someone asking the caller, not `kuomba` of any person).
fn keyword_content(text: &str) -> Vec<Vec<String>> {
    text.split_whitespace()
        .flat_map(|raw| {
            let exact = raw.starts_with('=');
            canonical(raw.trim_start_matches('='))
                .into_iter()
                .map(move |w| (w, exact))
        })
        .filter(|(w, _)| !STOPWORDS.contains(&w.as_str()))
        .map(|(w, exact)| {
            if exact {
                return vec![w];
            }
            let mut stems: Vec<String> = Vec::new();
            for form in analyze_pattern(&w) {
                if !stems.contains(&form.stem) {
                    stems.push(form.stem);
                }
            }
            stems
        })
        .collect()
}

/// Dice overlap of two word lists (each word given as its forms).
fn overlap(a: &[Vec<String>], b: &[Vec<String>]) -> f32 {
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    let shared_a = a
        .iter()
        .filter(|x| b.iter().any(|y| words_match(x, y)))
        .count();
    let shared_b = b
        .iter()
        .filter(|y| a.iter().any(|x| words_match(x, y)))
        .count();
    (shared_a + shared_b) as f32 / (a.len() + b.len()) as f32
}

fn compiled(intent: &Intent) -> &CompiledIntent {
    intent.compiled.get_or_init(|| CompiledIntent {
        examples: intent.examples.iter().map(|e| content(e)).collect(),
        keywords: intent
            .keywords
            .iter()
            .chain(&intent.decisive)
            .map(|k| keyword_content(k))
            .collect(),
        decisive: intent.decisive.iter().map(|k| keyword_content(k)).collect(),
        phrases: intent
            .keywords
            .iter()
            .filter(|k| keyword_content(k).is_empty())
            .map(|k| canonical(k))
            .filter(|words| !words.is_empty())
            .collect(),
    })
}

/// Whether every word of a keyword is in the turn.
fn found(keyword: &[Vec<String>], said: &[Vec<String>]) -> bool {
    !keyword.is_empty()
        && keyword
            .iter()
            .all(|k| said.iter().any(|s| words_match(s, k)))
}

/// Whether one of the intent's deciding keywords is in the turn.
fn decided(intent: &Intent, said: &[Vec<String>]) -> bool {
    compiled(intent).decisive.iter().any(|k| found(k, said))
}

/// How well a turn matches an intent, 0 to 1: a keyword present scores at least 0.75. `words` are the turn's
/// own words (for keywords made only of small words), `said` its content words.
pub fn score(intent: &Intent, said: &[Vec<String>], words: &[String]) -> f32 {
    let compiled = compiled(intent);
    let examples = compiled
        .examples
        .iter()
        .map(|e| overlap(said, e))
        .fold(0.0, f32::max);
    // Keywords are read as written (prefixes stripped, not object markers or extensions: `tutaonana` is not
    // `kumwona`); every keyword found adds a little, so the intent whose words the turn uses most wins a tie.
    let in_a_row =
        |phrase: &Vec<String>| words.windows(phrase.len()).any(|w| w == phrase.as_slice());
    let hits = compiled.keywords.iter().filter(|k| found(k, said)).count()
        + compiled.phrases.iter().filter(|p| in_a_row(p)).count();
    if hits > 0 {
        0.75 + 0.05 * (hits - 1).min(3) as f32 + 0.2 * examples
    } else {
        examples
    }
}

/// The best intent for a turn, with its score, when it reaches the threshold: an intent one of whose deciding
/// keywords the turn names first.
pub fn best<'a>(scenario: &'a Scenario, text: &str) -> Option<(&'a Intent, f32)> {
    ranked(scenario, text).into_iter().next()
}

/// Scores this close count as a tie.
const TIE: f32 = 0.03;
/// A keyword of the intent is in the turn from this score.
const KEYWORD_FOUND: f32 = 0.75;

/// Two titled intents the turn matches equally well by their examples alone, best first: the caller is asked
/// which was meant.
pub fn tied<'a>(scenario: &'a Scenario, text: &str) -> Option<(&'a Intent, &'a Intent)> {
    let ranked = ranked(scenario, text);
    let said = content(text);
    let (first, second) = (ranked.first()?, ranked.get(1)?);
    let titled = first.0.title.is_some() && second.0.title.is_some();
    // Only turns that name neither intent's keywords: a keyword is the scenario author's own word for it.
    let by_examples = first.1 < KEYWORD_FOUND && !decided(first.0, &said);
    (titled && by_examples && first.1 - second.1 < TIE).then_some((first.0, second.0))
}

/// The intents that reach the threshold, best first (deciding keywords before scores, then file order).
fn ranked<'a>(scenario: &'a Scenario, text: &str) -> Vec<(&'a Intent, f32)> {
    let said = content(text);
    let words = canonical(text);
    let mut ranked: Vec<((&Intent, f32), bool)> = scenario
        .intents
        .iter()
        .map(|intent| {
            (
                (intent, score(intent, &said, &words)),
                decided(intent, &said),
            )
        })
        .filter(|((_, s), _)| *s >= THRESHOLD)
        .collect();
    // Among equals the later intent comes first, as the best was always chosen.
    ranked.reverse();
    ranked.sort_by(|(a, a_decided), (b, b_decided)| {
        b_decided.cmp(a_decided).then(b.1.total_cmp(&a.1))
    });
    ranked.into_iter().map(|(best, _)| best).collect()
}

/// Words that say yes.
const YES: [&str; 30] = [
    "ndiyo",
    "ndio",
    "ndo",
    "sawa",
    "thibitisha",
    "nathibitisha",
    "naam",
    "yes",
    "yeah",
    "yep",
    "sure",
    "ok",
    "okay",
    "oky",
    "endelea",
    "kubali",
    "nakubali",
    "eeh",
    "ee",
    "eh",
    "eee",
    "poa",
    "haya",
    "safi",
    "kabisa",
    "tuma",
    "lipa",
    "nunua",
    "zuia",
    "fanya",
];
/// Words that say no or cancel. (`la` also means "of", so it counts only as a whole turn.)
const NO: [&str; 17] = [
    "hapana",
    "acha",
    "sitisha",
    "ghairi",
    "no",
    "nope",
    "cancel",
    "stop",
    "sitaki",
    "achana",
    "siyo",
    "subiri",
    "ngoja",
    "wacha",
    "batilisha",
    "usitume",
    "usilipe",
];
/// Words that turn a following yes into a no: `si sawa`, `sio sawa`, `not ok`.
const NEGATORS: [&str; 5] = ["si", "sio", "siyo", "not", "don't"];

/// A turn that says yes (and nothing that says no).
pub fn is_yes(text: &str) -> bool {
    tokens(text).iter().any(|w| YES.contains(&w.as_str())) && !is_no(text)
}

/// A turn that says no or cancels: a no-word, a negated yes (`si sawa`), or just `la`.
pub fn is_no(text: &str) -> bool {
    let words = tokens(text);
    if words.len() <= 2 && words.first().is_some_and(|w| w == "la") {
        return true;
    }
    words.iter().any(|w| NO.contains(&w.as_str()))
        || words
            .windows(2)
            .any(|pair| NEGATORS.contains(&pair[0].as_str()) && YES.contains(&pair[1].as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yes_and_no() {
        for yes in ["ndiyo", "Sawa, endelea", "ok", "ndio tuma"] {
            assert!(is_yes(yes) && !is_no(yes), "{yes}");
        }
        for no in [
            "hapana",
            "si sawa",
            "sio sawa",
            "siyo sawa",
            "not ok",
            "la",
            "La!",
            "acha",
        ] {
            assert!(is_no(no) && !is_yes(no), "{no}");
        }
        // "la" inside a sentence means "of".
        assert!(!is_no("Juma, tatizo la tumbo"));
    }
}
