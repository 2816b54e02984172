//! Repair, as people do it on the phone: "rudia?" or "sijasikia" hears the last reply again, and "acha" or
//! "sitaki tena" calls off what is in progress (inside a flow the engine cancels it; outside one it says there is
//! nothing to call off). A repair turn is short and says nothing else: "nataka kurudia muamala" is a request.

use super::words::tokens;

/// Words that ask to hear the last reply again.
const REPEAT: [&str; 19] = [
    "rudia",
    "sijakuelewa",
    "sikukuelewa",
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
const FILLER: [&str; 42] = [
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
    "tu",
    "hizo",
    "hayo",
    "kusikia",
    "kuskia",
    // A bad line: "sijasikia vizuri, network ni mbaya".
    "network",
    "mtandao",
    "line",
    "ni",
    "mbaya",
    "inakatika",
];
/// Words that point back at what was said ("rudia hiyo tarehe", "rudia saa ulizosema"): one word may stand next
/// to them.
const POINTING: [&str; 13] = [
    "hiyo",
    "hilo",
    "hicho",
    "hizo",
    "hayo",
    "ile",
    "lile",
    "ulizosema",
    "uliyosema",
    "ulichosema",
    "ulilosema",
    "uliosema",
    "ulisema",
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
    let pointing = |i: usize| words.get(i).is_some_and(|w| POINTING.contains(&w.as_str()));
    let pointed = |i: usize| (i > 0 && pointing(i - 1)) || pointing(i + 1);
    let others = (0..words.len())
        .filter(|&i| {
            !(cue(&words[i]) || paired(i) || pointing(i) || FILLER.contains(&words[i].as_str()))
        })
        .collect::<Vec<_>>();
    has_cue && (others.is_empty() || (others.len() == 1 && pointed(others[0])))
}

/// Whether the turn asks to hear the last reply again.
pub fn asks_to_repeat(text: &str) -> bool {
    short_and_only(&tokens(text), |w| REPEAT.contains(&w), &REPEAT_PAIRS)
}

/// Words a listener says to show they are following, not to take a turn ("eeh", "mhm", "sawa", "naam").
const BACKCHANNEL: [&str; 24] = [
    "eeh", "ee", "eh", "eee", "mhm", "mmh", "mhmm", "hmm", "mm", "aha", "ah", "aah", "sawa",
    "ndiyo", "ndio", "naam", "haya", "ok", "okay", "yes", "yeah", "kweli", "poa", "safi",
];

/// Whether a turn is only a listener's sounds of following ("eeh", "mhm, sawa"), at most four of them.
pub fn is_backchannel(text: &str) -> bool {
    let words = tokens(text);
    !words.is_empty() && words.len() <= 4 && words.iter().all(|w| BACKCHANNEL.contains(&w.as_str()))
}

/// Whether the turn calls off what is in progress ("acha", "sitaki tena", "ghairi basi").
pub fn calls_off(text: &str) -> bool {
    let pairs = [("sitaki", "tena"), ("achana", "nayo"), ("forget", "it")];
    short_and_only(&tokens(text), |w| CALL_OFF.contains(&w), &pairs)
}

/// Whether a turn inside a flow calls it off: as [`calls_off`], or a short turn without a number that opens with
/// a call-off ("acha sitaki kutuma tena", "hapana wacha hiyo", "subiri, wacha kwanza nitapiga baadaye").
pub fn calls_off_flow(text: &str) -> bool {
    let words = tokens(text);
    let opens = words
        .iter()
        .take(3)
        .any(|w| CALL_OFF.contains(&w.as_str()) && w != "sitaki");
    let again = words.windows(2).any(|p| p[0] == "sitaki" && p[1] == "tena");
    calls_off(text)
        || ((opens || again)
            && words.len() <= 8
            && !words.iter().any(|w| w.chars().any(|c| c.is_ascii_digit())))
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
            "sijakuelewa, rudia",
            "rudia hiyo tarehe",
            "sijasikia vizuri network ni mbaya",
            "rudia saa ulizosema",
        ] {
            assert!(asks_to_repeat(text), "{text}");
        }
        for text in [
            "nataka kurudia muamala wa jana",
            "sema tena salio langu ni ngapi",
            "",
            "nimesikia, asante",
            "rudia muamala",
            "rudia hiyo tarehe ya kesho",
        ] {
            assert!(!asks_to_repeat(text), "{text}");
        }
    }

    #[test]
    fn backchannels_are_only_sounds_of_following() {
        for text in ["eeh", "Mhm.", "sawa sawa", "aha, ndiyo", "naam"] {
            assert!(is_backchannel(text), "{text}");
        }
        for text in [
            "",
            "sawa, nataka salio",
            "ndiyo ndiyo ndiyo ndiyo ndiyo",
            "hapana",
        ] {
            assert!(!is_backchannel(text), "{text}");
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
            "aah wacha tu, sitaki tena",
            "acha, sitaki kusikia hizo",
        ] {
            assert!(calls_off(text), "{text}");
        }
        for text in [
            "acha sitaki kutuma tena",
            "hapana wacha hiyo",
            "subiri wacha kwanza nitapiga baadaye",
        ] {
            assert!(calls_off_flow(text), "{text}");
        }
        for text in [
            "acha nikuulize kuhusu mkopo wa biashara na riba yake leo",
            "wacha nitume 5000",
        ] {
            assert!(!calls_off_flow(text), "{text}");
        }
        for text in ["sitaki kutuma pesa kwa mama", "acha nikuulize kuhusu mkopo"] {
            assert!(!calls_off(text), "{text}");
        }
    }
}
