//! Words no Swahili sentence ends on: a caller whose words so far end on one of them has paused mid-sentence
//! ("Namba yangu ni …", "Nataka kutuma pesa kwa …"), whatever their voice sounds like.

use crate::dialogue::words::tokens;

/// Connectives (the `-a` of association in every noun class), conjunctions, prepositions, relatives, the
/// copula, and the fillers of a caller still looking for a word; a few English ones for callers who mix.
const ENDS_NOTHING: &[&str] = &[
    // -a of association: "mtoto wa …", "akaunti ya …", "salio la …", "habari za …"
    "wa",
    "ya",
    "la",
    "za",
    "cha",
    "vya",
    "kwa",
    "pa",
    "mwa",
    // conjunctions
    "na",
    "au",
    "ama",
    "lakini",
    "ila",
    "ili",
    "kwamba",
    "wala",
    "ingawa",
    "ijapokuwa",
    "halafu",
    "kisha",
    "sababu",
    "kama",
    // prepositions and the like
    "hadi",
    "mpaka",
    "tangu",
    "kutoka",
    "kwenye",
    "katika",
    "kuhusu",
    "bila",
    "baada",
    "kabla",
    "badala",
    // relatives: "mtu ambaye …"
    "ambaye",
    "ambao",
    "ambacho",
    "ambavyo",
    "ambayo",
    "ambalo",
    "ambazo",
    "ambapo",
    "ambako",
    "ambamo",
    // the copula: "namba yangu ni …"
    "ni",
    "si",
    // a caller looking for the word
    "yaani",
    "eee",
    "eeh",
    "ehh",
    "mmm",
    "aaa",
    // mixed in
    "and",
    "the",
    "to",
    "of",
    "for",
    "my",
    "with",
];

/// Whether `text`, what was heard of a turn so far, stops on a word that cannot end it.
pub fn unfinished(text: &str) -> bool {
    tokens(text)
        .last()
        .is_some_and(|last| ENDS_NOTHING.contains(&last.as_str()))
}

#[cfg(test)]
mod tests {
    use super::unfinished;

    #[test]
    fn a_turn_stopped_on_a_connective_a_conjunction_or_the_copula_is_not_finished() {
        for text in [
            "Namba yangu ni",
            "nataka kutuma pesa kwa",
            "Salio la akaunti ya",
            "Mama yangu ana kisukari na",
            "nilikuja jana lakini,",
            "Mtoto wangu ambaye",
            "nataka ku-, yaani",
            "Habari za",
        ] {
            assert!(unfinished(text), "{text}");
        }
    }

    #[test]
    fn a_turn_that_ends_as_sentences_do_is_finished() {
        for text in [
            "Namba yangu ni sifuri saba moja",
            "Asante sana, kwaheri.",
            "Nataka kujua salio langu.",
            "Ndiyo",
            "Twende pamoja",
        ] {
            assert!(!unfinished(text), "{text}");
        }
        assert!(!unfinished(""));
    }
}
