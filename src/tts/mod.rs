//! Text-to-speech: the Swahili text front end shared by every voice, and the embedded formant voice.
//!
//! - [`normalize`] turns written Swahili (numbers, money, dates, clock times, phone numbers, abbreviations,
//!   acronyms) into words; [`lexicon`] holds the pronunciation exceptions.
//! - [`g2p`] turns words into phonemes, syllables, stress and phrase intonation.

pub mod g2p;
pub mod lexicon;
pub mod normalize;
