//! Swahili greetings and their proper answers: Shikamoo → Marahaba, Hujambo → Sijambo, Hamjambo → Hatujambo,
//! Mambo / Vipi / Niaje → Poa, Habari → Nzuri, Salaam aleikum → Waaleikum salaam, Hodi → Karibu. A turn that opens with a
//! greeting is answered with its pair first, then with whatever else it asks.

use super::words::tokens;

/// Greetings (as words at the start of a turn) and their answers; longer greetings first.
const PAIRS: [(&[&str], &str); 25] = [
    (&["hodi"], "Karibu!"),
    (&["asalaam", "aleikum"], "Waaleikum salaam!"),
    (&["assalamu", "alaikum"], "Waaleikum salaam!"),
    (&["salaam", "aleikum"], "Waaleikum salaam!"),
    (&["salam", "alaykum"], "Waaleikum salaam!"),
    (&["salamu", "aleikum"], "Waaleikum salaam!"),
    (&["shikamoo"], "Marahaba!"),
    (&["shkamoo"], "Marahaba!"),
    (&["shikamooni"], "Marahaba!"),
    (&["hujambo"], "Sijambo, asante!"),
    (&["hamjambo"], "Hatujambo, asante!"),
    (&["mambo", "vipi"], "Poa kabisa!"),
    (&["mambo"], "Poa!"),
    (&["vipi"], "Poa!"),
    (&["niaje"], "Poa sana!"),
    (&["sasa"], "Poa!"),
    (&["oya"], "Poa!"),
    (&["shwari"], "Shwari kabisa!"),
    (&["habari", "yako"], "Nzuri, asante!"),
    (&["habari", "za"], "Nzuri, asante!"),
    (&["habari"], "Nzuri, asante!"),
    (&["hali", "gani"], "Salama, asante!"),
    (&["salaam"], "Salaam!"),
    (&["hello"], "Habari!"),
    (&["hi"], "Habari!"),
];

/// Words that may follow a greeting without asking for anything: whom it is said to, and a greeting's own tail
/// (`habari za asubuhi`).
const TAIL: [&str; 42] = [
    "msee", "bro", "braza", "dada", "kaka", "mama", "baba", "bwana", "ndugu", "mzee", "boss",
    "bosi", "madam", "sir", "rafiki", "mwanangu", "bibi", "babu", "daktari", "dokta", "asubuhi",
    "mchana", "jioni", "usiku", "leo", "siku", "nyingi", "kazi", "nyumbani", "yako", "yenu",
    "zako", "wewe", "nyote", "vipi", "wazee", "mtu", "wangu", "nesi", "sista", "muuguzi", "afisa",
];

/// The answer to a greeting a turn opens with, and how many of its words the greeting takes (with its tail).
pub fn opening(text: &str) -> Option<(&'static str, usize)> {
    let words = tokens(text);
    let (greeting, answer) = PAIRS.iter().find(|(greeting, _)| {
        words.len() >= greeting.len() && greeting.iter().zip(&words).all(|(g, w)| g == w)
    })?;
    // `sasa` and `vipi` are greetings only at the very start of a short turn (`sasa hivi` means "right now").
    if matches!(greeting[0], "sasa" | "vipi" | "hi")
        && words.get(1).is_some_and(|w| w == "hivi" || w == "ngapi")
    {
        return None;
    }
    let mut taken = greeting.len();
    while words.get(taken).is_some_and(|w| TAIL.contains(&w.as_str())) {
        taken += 1;
    }
    Some((*answer, taken))
}

/// The turn without the greeting it opens with (`taken` words), for intent matching.
pub fn rest(text: &str, taken: usize) -> String {
    tokens(text)
        .into_iter()
        .skip(taken)
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings_get_their_pair() {
        assert_eq!(opening("Shikamoo!").map(|o| o.0), Some("Marahaba!"));
        assert_eq!(opening("hujambo").map(|o| o.0), Some("Sijambo, asante!"));
        assert_eq!(opening("Hamjambo").map(|o| o.0), Some("Hatujambo, asante!"));
        assert_eq!(
            opening("Niaje msee").map(|o| (o.0, o.1)),
            Some(("Poa sana!", 2))
        );
        assert_eq!(opening("mambo vipi").map(|o| o.0), Some("Poa kabisa!"));
        assert_eq!(
            opening("Habari za asubuhi, nataka kujua salio").map(|o| o.1),
            Some(3)
        );
        assert_eq!(opening("sasa hivi nataka pesa"), None);
        assert_eq!(opening("nataka kutuma pesa"), None);
        assert_eq!(rest("Habari za asubuhi, nataka salio", 3), "nataka salio");
    }
}
