//! Espeak-compatible IPA for Piper voices: the phoneme strings Piper voices were trained on come from
//! `espeak-ng -v sw`, so our G2P's transcription is written with the same symbols — close mid vowels `e o`,
//! `ɡ` (U+0261), `ɟ` for `j`, prenasalised stops as nasal + stop, primary stress `ˈ` right before the stressed
//! syllable's vowel (or syllabic nasal), words separated by spaces and each phrase closed by its punctuation.

use crate::tts::g2p::{Phoneme, PhraseEnd, Utterance, Word};

/// The espeak symbols of one phoneme.
fn symbols(phoneme: Phoneme) -> &'static str {
    use Phoneme::*;
    match phoneme {
        A => "a",
        E => "e",
        I => "i",
        O => "o",
        U => "u",
        P => "p",
        B => "b",
        T => "t",
        D => "d",
        K => "k",
        G => "ɡ",
        Ch => "tʃ",
        J => "ɟ",
        F => "f",
        V => "v",
        Th => "θ",
        Dh => "ð",
        S => "s",
        Z => "z",
        Sh => "ʃ",
        Gh => "ɣ",
        Kh => "x",
        H => "h",
        M => "m",
        N => "n",
        Ny => "ɲ",
        Ng => "ŋ",
        L => "l",
        R => "r",
        W => "w",
        Y => "j",
        Mb => "mb",
        Nd => "nd",
        Nj => "nɟ",
        Ngg => "ŋɡ",
        Nz => "nz",
        Mv => "mv",
        SylM => "m̩",
        SylN => "n̩",
    }
}

/// The punctuation that closes a phrase in espeak's output.
fn closing(end: PhraseEnd) -> char {
    match end {
        PhraseEnd::Continue => ',',
        PhraseEnd::Statement => '.',
        PhraseEnd::Exclamation => '!',
        PhraseEnd::Question => '?',
    }
}

/// One word as espeak writes it: `ˈ` before the nucleus of the stressed syllable (words of two or more
/// syllables), `ˌ` before the nucleus of every second syllable counted from the first while at least one syllable
/// separates it from the stressed one, and a syllabic nasal marked `m̩`/`n̩` only when it carries the stress.
fn word(word: &Word, out: &mut String) {
    let several = word.syllables.len() > 1;
    for (index, syllable) in word.syllables.iter().enumerate() {
        let stressed = several && index == word.stressed;
        let mark = if stressed {
            Some('ˈ')
        } else if index % 2 == 0 && index + 2 <= word.stressed {
            Some('ˌ')
        } else {
            None
        };
        let mut pending = mark;
        for &phoneme in &syllable.phonemes {
            if phoneme.is_syllabic() {
                if let Some(mark) = pending.take() {
                    out.push(mark);
                }
            }
            out.push_str(match phoneme {
                Phoneme::SylM if !stressed => "m",
                Phoneme::SylN if !stressed => "n",
                other => symbols(other),
            });
        }
    }
}

/// The IPA of a whole utterance, e.g. `habˈari jˈako.`
pub fn transcription(utterance: &Utterance) -> String {
    let mut out = String::new();
    for phrase in &utterance.phrases {
        if phrase.words.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        for (index, w) in phrase.words.iter().enumerate() {
            if index > 0 {
                out.push(' ');
            }
            word(w, &mut out);
        }
        out.push(closing(phrase.end));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tts::g2p::transcribe;
    use crate::tts::lexicon::Lexicon;

    fn ipa(text: &str) -> String {
        transcription(&transcribe(text, Lexicon::embedded()))
    }

    #[test]
    fn matches_espeak_ng_for_ordinary_words() {
        // Each expectation is what `espeak-ng -q -v sw --ipa` prints for the word.
        for (text, espeak) in [
            ("habari yako", "habˈari jˈako."),
            ("nyumba", "ɲˈumba."),
            ("chakula", "tʃakˈula."),
            ("shule", "ʃˈule."),
            ("ndizi", "ndˈizi."),
            ("mtu", "ˈm̩tu."),
            ("nchi", "ˈn̩tʃi."),
            ("mbwa", "ˈm̩bwa."),
            ("dhahabu", "ðahˈabu."),
            ("ghali", "ɣˈali."),
            ("rafiki", "rafˈiki."),
            ("jambo", "ɟˈambo."),
            ("ngoma", "ŋɡˈoma."),
            ("mvua", "mvˈua."),
            ("nzuri", "nzˈuri."),
            ("mwalimu", "mwalˈimu."),
            ("zawadi", "zawˈadi."),
            ("mtoto", "mtˈoto."),
            ("mkate", "mkˈate."),
            ("mjini", "mɟˈini."),
            ("kitabu", "kitˈabu."),
            ("anakula", "ˌanakˈula."),
            ("asubuhi", "ˌasubˈuhi."),
            ("kiswahili", "kˌiswahˈili."),
            ("hospitalini", "hˌospitalˈini."),
            ("alipokuwa", "ˌalipokˈuwa."),
            ("nitakapokuwa", "nˌitakˌapokˈuwa."),
            ("tutakapokwenda", "tˌutakˌapokwˈenda."),
        ] {
            assert_eq!(ipa(text), espeak, "{text}");
        }
    }

    #[test]
    fn phrases_keep_their_punctuation() {
        assert_eq!(
            ipa("habari yako? nzuri sana, asante!"),
            "habˈari jˈako? nzˈuri sˈana, asˈante!"
        );
    }
}
