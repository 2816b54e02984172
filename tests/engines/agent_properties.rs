//! Property tests over what callers say to the agent: the safety screen, the secret masker and the number
//! parser never panic on any text; a masked turn keeps no digit and no offered value; every amount the agent reads
//! back in words is read again as the same amount, and written amounts in every common form are read exactly.

use std::sync::OnceLock;

use proptest::prelude::*;
use sauti::dialogue::numbers::{self, Amount};
use sauti::dialogue::safety::{self, SafetyRules};
use sauti::dialogue::scenario::{load, Scenario};

fn health() -> &'static Scenario {
    static SCENARIO: OnceLock<Scenario> = OnceLock::new();
    SCENARIO.get_or_init(|| {
        load(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/health.toml"))
            .unwrap()
    })
}

/// Turns like callers': Swahili words, danger words, secrets' names, numbers in digits and words, punctuation
/// and stray Unicode.
fn caller_like() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("mtoto".to_string()),
        Just("hapumui".to_string()),
        Just("damu nyingi".to_string()),
        Just("pin yangu ni".to_string()),
        Just("nywila".to_string()),
        Just("elfu".to_string()),
        Just("laki moja na nusu".to_string()),
        Just("thao".to_string()),
        Just("sifuri saba moja".to_string()),
        Just("+255".to_string()),
        Just("kujiua".to_string()),
        "[0-9]{1,12}",
        "[0-9 ,.:/-]{1,10}",
        "[a-zA-Z']{1,10}",
        "\\PC{1,6}",
    ];
    proptest::collection::vec(pieces, 0..20).prop_map(|p| p.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn screening_masking_and_numbers_never_panic(text in caller_like()) {
        let _ = safety::screen(health(), &text);
        let _ = numbers::amount(&text);
        let _ = numbers::digit_strings(&text);
        for span in SafetyRules::built_in().secrets.offered(&text) {
            prop_assert!(text.is_char_boundary(span.start) && text.is_char_boundary(span.end));
        }
        let masked = SafetyRules::built_in().secrets.mask(&text);
        prop_assert!(!masked.chars().any(|c| c.is_ascii_digit()), "{text:?} -> {masked:?}");
    }

    #[test]
    fn any_text_is_safe_to_screen(text in "\\PC{0,160}") {
        let _ = safety::screen(health(), &text);
        let _ = SafetyRules::built_in().secrets.mask(&text);
        let _ = numbers::amounts(&text);
    }

    #[test]
    fn an_offered_pin_is_always_caught_and_masked(pin in "[0-9]{4,6}", lead in prop_oneof![
        Just("PIN yangu ni"), Just("pini yangu ya M-Pesa ni"), Just("namba ya siri ni"), Just("my pin is"),
        Just("OTP niliyotumiwa ni"), Just("siri yangu ni"),
    ]) {
        let spaced: String = pin.chars().map(|c| c.to_string()).collect::<Vec<_>>().join(" ");
        for text in [format!("{lead} {pin}"), format!("{lead} {spaced}")] {
            prop_assert!(SafetyRules::built_in().secrets.offers(&text), "{text:?}");
            prop_assert!(!SafetyRules::built_in().secrets.mask(&text).contains(&pin[..3]), "{text:?}");
        }
    }

    // Whole tens of shillings: "elfu tisini na moja" is 91,000 to a Swahili listener, so 90,001 cannot be said
    // back without being heard two ways (amounts are not that precise on the phone).
    #[test]
    fn amounts_read_back_in_words_read_again_the_same(tens in 1u64..=200_000_000) {
        let n = tens * 10;
        let words = numbers::in_words(n);
        prop_assert_eq!(numbers::amount(&words), Amount::One(n), "{}", words);
    }

    #[test]
    fn written_amounts_are_read_exactly(n in 1u64..=99_999_999) {
        let grouped = {
            let digits = n.to_string();
            let mut out = String::new();
            for (i, c) in digits.chars().enumerate() {
                if i > 0 && (digits.len() - i) % 3 == 0 {
                    out.push(',');
                }
                out.push(c);
            }
            out
        };
        for text in [format!("TSh {grouped}"), format!("shilingi {grouped}/="), format!("tuma {n}")] {
            // Eight ungrouped digits or more are account numbers, not amounts.
            if n >= 10_000_000 && !text.contains(',') {
                continue;
            }
            prop_assert_eq!(numbers::amount(&text), Amount::One(n), "{}", text);
        }
        if n % 1000 == 0 && n < 1_000_000 {
            prop_assert_eq!(numbers::amount(&format!("{}k", n / 1000)), Amount::One(n));
            prop_assert_eq!(numbers::amount(&format!("thao {}", n / 1000)), Amount::One(n));
        }
    }
}

/// Emergencies as templates: each `{n}` is a slot with its ways of being said: the Swahili, a Sheng synonym, or
/// the English verb inside Swahili morphology (joined, hyphenated or apart).
const EMERGENCIES: [(&str, &[&[&str]]); 6] = [
    (
        "{0} {1} ghafla na hajibu tukimwita",
        &[
            &["mzee", "buda", "mtu", "msee"],
            &[
                "ameanguka",
                "amedondoka",
                "ame-collapse",
                "amecollapse",
                "ame collapse",
            ],
        ],
    ),
    (
        "mke wangu ana mimba na {0} sana sasa hivi",
        &[&["anatokwa damu", "ana-bleed", "anableed", "ana bleed"]],
    ),
    (
        "{0} {1} tangu asubuhi",
        &[
            &["mtoto", "mtoi"],
            &[
                "hapumui",
                "hawezi kupumua",
                "hawezi ku-breathe",
                "hawezi kubreathe",
            ],
        ],
    ),
    (
        "kaka {0} kazini na {1}",
        &[
            &["amezimia", "ame-faint", "amefaint"],
            &["hajitambui", "hajaamka", "haja-wake up"],
        ],
    ),
    (
        "{0} amekunywa {1} sasa hivi anatapika",
        &[
            &["mtoto", "mtoi"],
            &["mafuta ya taa", "paraffin", "kerosine"],
        ],
    ),
    (
        "{0} {1} vidonge vyote vya presha leo",
        &[
            &["bibi", "mathe", "mama"],
            &["amemeza", "ame-swallow", "ameswallow", "ame-overdose na"],
        ],
    ),
];

fn said(template: &str, choices: &[&str]) -> String {
    let mut text = template.to_string();
    for (i, choice) in choices.iter().enumerate() {
        text = text.replace(&format!("{{{i}}}"), choice);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn sheng_synonyms_and_english_stems_never_turn_an_emergency_into_a_miss(
        which in 0..EMERGENCIES.len(),
        picks in proptest::collection::vec(0usize..8, 2),
    ) {
        let (template, slots) = EMERGENCIES[which];
        let plain: Vec<&str> = slots.iter().map(|ways| ways[0]).collect();
        let varied: Vec<&str> = slots.iter().zip(&picks).map(|(ways, &p)| ways[p % ways.len()]).collect();
        let reading = sauti::dialogue::reading::Reading::built_in();
        let swahili = said(template, &plain);
        prop_assert!(
            matches!(safety::screen(health(), &reading.read(&swahili)), Some(safety::SafetyCase::Emergency(_))),
            "the Swahili itself: {swahili:?}"
        );
        let mixed = said(template, &varied);
        prop_assert!(
            matches!(safety::screen(health(), &reading.read(&mixed)), Some(safety::SafetyCase::Emergency(_))),
            "{mixed:?} read as {:?}", reading.read(&mixed)
        );
    }
}

/// Crises of the caller's own, and idioms or stories that use the same words (each excused on its own).
const CRISES: [&str; 6] = [
    "nataka kujiua leo",
    "sioni sababu ya kuendelea kuishi",
    "nime-cut mikono yangu tena, siwezi kuacha",
    "najiskia kama ku-end life yangu",
    "bora nife tu",
    "nimemeza vidonge vyote nimalize",
];
const IDIOMS: [&str; 6] = [
    "nataka kufa na wivu",
    "nimecheka mpaka nikataka kufa",
    "niliona movie mtu alijiua mwishoni",
    "mwaka jana karibu nife kwa ajali",
    "sina mawazo ya kujidhuru",
    "kitabu ninachosoma mhusika anajiua",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// An idiom or a story beside a crisis of the caller's own never excuses it, in either order.
    #[test]
    fn an_idiom_beside_a_crisis_never_excuses_it(crisis in 0..CRISES.len(), idiom in 0..IDIOMS.len(), first in any::<bool>()) {
        let reading = sauti::dialogue::reading::Reading::built_in();
        prop_assert_eq!(safety::screen(health(), &reading.read(IDIOMS[idiom])), None, "{}", IDIOMS[idiom]);
        let text = match first {
            true => format!("{}, na {}", IDIOMS[idiom], CRISES[crisis]),
            false => format!("{}. {}", CRISES[crisis], IDIOMS[idiom]),
        };
        prop_assert_eq!(safety::screen(health(), &reading.read(&text)), Some(safety::SafetyCase::Crisis), "{}", text);
    }
}
