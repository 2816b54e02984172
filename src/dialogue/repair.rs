//! Repair, as people do it on the phone: "rudia?" or "sijasikia" hears the last reply again, and "acha" or
//! "sitaki tena" calls off what is in progress (inside a flow the engine cancels it; outside one it says there is
//! nothing to call off). A repair turn is short and says nothing else: "nataka kurudia muamala" is a request.

use super::words::tokens;

/// Words that ask to hear the last reply again.
const REPEAT: [&str; 17] = [
    "rudia",
    "rudie",
    "kurudia",
    "sijasikia",
    "sijakusikia",
    "sikusikia",
    "sikuskia",
    "sijaskia",
    "repeat",
    "pardon",
    "again",
    "haijasikika",
    "hujasikika",
    "sikuelewa",
    "sijaelewa",
    "unasemaje",
    "umesemaje",
];
/// Two-word ways of asking the same ("sema tena", "come again").
const REPEAT_PAIRS: [(&str, &str); 6] = [
    ("sema", "tena"),
    ("say", "again"),
    ("come", "again"),
    ("umesema", "nini"),
    ("what", "say"),
    ("sauti", "katika"),
];
/// Words a repair turn may carry besides its cue.
const FILLER: [&str; 31] = [
    "say",
    "tafadhali",
    "tena",
    "samahani",
    "pole",
    "please",
    "sorry",
    "hiyo",
    "hilo",
    "hicho",
    "ulichosema",
    "uliyosema",
    "jibu",
    "mara",
    "moja",
    "kidogo",
    "polepole",
    "taratibu",
    "sikia",
    "that",
    "did",
    "you",
    "what",
    "eeh",
    "ee",
    "aah",
    "nini",
    "sijui",
    "vizuri",
    "wewe",
    "basi",
];
/// Words that call off what is in progress.
const CALL_OFF: [&str; 9] = [
    "acha",
    "achana",
    "ghairi",
    "sitisha",
    "batilisha",
    "cancel",
    "wacha",
    "stop",
    "sitaki",
];

fn short_and_only(words: &[String], cue: impl Fn(&str) -> bool, pairs: &[(&str, &str)]) -> bool {
    if words.is_empty() || words.len() > 6 {
        return false;
    }
    let paired = |i: usize| {
        pairs.iter().any(|(a, b)| {
            (words[i] == *a && words.get(i + 1).is_some_and(|w| w == b))
                || (words[i] == *b && i > 0 && words[i - 1] == *a)
        })
    };
    let has_cue = (0..words.len()).any(|i| cue(&words[i]) || paired(i));
    has_cue
        && (0..words.len())
            .all(|i| cue(&words[i]) || paired(i) || FILLER.contains(&words[i].as_str()))
}

/// Whether the turn asks to hear the last reply again.
pub fn asks_to_repeat(text: &str) -> bool {
    short_and_only(&tokens(text), |w| REPEAT.contains(&w), &REPEAT_PAIRS)
}

/// Whether the turn calls off what is in progress ("acha", "sitaki tena", "ghairi basi").
pub fn calls_off(text: &str) -> bool {
    let pairs = [("sitaki", "tena"), ("achana", "nayo"), ("forget", "it")];
    short_and_only(&tokens(text), |w| CALL_OFF.contains(&w), &pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeats_are_short_and_say_nothing_else() {
        for text in [
            "rudia tafadhali",
            "Sijasikia, sema tena",
            "samahani umesema nini?",
            "pardon?",
            "say that again please",
            "rudia tena polepole",
        ] {
            assert!(asks_to_repeat(text), "{text}");
        }
        for text in [
            "nataka kurudia muamala wa jana",
            "sema tena salio langu ni ngapi",
            "",
            "nimesikia, asante",
        ] {
            assert!(!asks_to_repeat(text), "{text}");
        }
    }

    #[test]
    fn calling_off() {
        for text in [
            "acha",
            "sitaki tena",
            "ghairi basi",
            "cancel please",
            "achana nayo",
        ] {
            assert!(calls_off(text), "{text}");
        }
        for text in ["sitaki kutuma pesa kwa mama", "acha nikuulize kuhusu mkopo"] {
            assert!(!calls_off(text), "{text}");
        }
    }
}
