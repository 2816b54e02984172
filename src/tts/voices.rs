//! The [`Synthesizer`] trait and the two built-in Swahili voices of the embedded synthesizer.

use super::formant::{FormantVoice, Preset};
use super::g2p;
use super::lexicon::Lexicon;
use super::normalize::{split_pieces, PIECE_CHARS};
use super::{SpokenWord, Timed, TtsError, VoiceSettings};

/// A voice that turns Swahili text into 16 kHz mono samples. Implementations are synchronous and CPU-bound:
/// callers run them on blocking threads.
pub trait Synthesizer: Send + Sync {
    /// Synthesise `text` (raw written Swahili; the voice normalises it).
    fn synthesize(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<f32>, TtsError>;

    /// The engine's name, for metrics and logs (`formant`, `vits`, …).
    fn engine(&self) -> &'static str;

    /// The pieces (sentences) `text` is synthesised in, for spreading one request over several workers:
    /// the audio of every piece, in order, is exactly what [`Synthesizer::synthesize`] returns. One piece by
    /// default. Refuses what `synthesize` would refuse before any audio is made.
    fn pieces(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<String>, TtsError> {
        settings.validate()?;
        Ok(vec![text.to_string()])
    }

    /// Synthesise piece `index` of [`Synthesizer::pieces`] (empty audio is allowed for a piece), reading it
    /// with `lexicon` in place of the voice's own when one is given (a request's pronunciation dictionaries
    /// laid over the server's lexicon).
    fn synthesize_piece(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Vec<f32>, TtsError>;

    /// [`Synthesizer::synthesize_piece`], with when each word was spoken; `None` from voices that cannot
    /// tell (a neural model that gives no durations).
    fn synthesize_piece_timed(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Option<Timed>, TtsError> {
        let _ = (piece, index, settings, lexicon);
        Ok(None)
    }

    /// [`Synthesizer::synthesize_piece`] (or, when `timed`, [`Synthesizer::synthesize_piece_timed`]) handed on
    /// in parts as they are made: `part` gets each part's samples in order, the piece's words with the first
    /// part when timed, and returns false when nobody listens any more, which stops the work. Joined, the parts
    /// are the piece's audio. `Ok(false)` when words were asked of a voice that cannot time them (nothing was
    /// handed on). One part by default; a split neural voice hands on a part per decoded window.
    fn synthesize_piece_parts(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
        timed: bool,
        part: &mut dyn FnMut(Vec<f32>, Vec<SpokenWord>) -> bool,
    ) -> Result<bool, TtsError> {
        match timed {
            true => match self.synthesize_piece_timed(piece, index, settings, lexicon)? {
                Some((samples, words)) => part(samples, words),
                None => return Ok(false),
            },
            false => part(
                self.synthesize_piece(piece, index, settings, lexicon)?,
                Vec::new(),
            ),
        };
        Ok(true)
    }
}

/// A built-in voice: text front end + formant synthesizer. Needs no files.
#[derive(Debug, Clone)]
pub struct EmbeddedVoice {
    voice: FormantVoice,
    lexicon: Lexicon,
}

/// Id of the built-in female voice (the TTS default).
pub const ZURI: &str = "zuri";
/// Id of the built-in male voice (the voice agent's default).
pub const BARAKA: &str = "baraka";

impl EmbeddedVoice {
    /// A voice with a speaker preset and the shipped lexicon.
    pub fn new(preset: Preset) -> Self {
        Self {
            voice: FormantVoice::new(preset),
            lexicon: Lexicon::embedded().clone(),
        }
    }

    /// "zuri": the higher, female built-in voice.
    pub fn zuri() -> Self {
        Self::new(Preset::female())
    }

    /// "baraka": the lower, male built-in voice.
    pub fn baraka() -> Self {
        Self::new(Preset::male())
    }

    /// Use another lexicon (an operator's `config/lexicon.toml`).
    pub fn with_lexicon(mut self, lexicon: Lexicon) -> Self {
        self.lexicon = lexicon;
        self
    }

    /// The formant voice underneath (for diagnostics such as sustained vowels).
    pub fn formant(&self) -> &FormantVoice {
        &self.voice
    }

    /// Synthesise with an explicit seed for the prosodic variation; the same text, settings and seed always
    /// give the same samples.
    pub fn synthesize_seeded(
        &self,
        text: &str,
        settings: &VoiceSettings,
        seed: u64,
    ) -> Result<Vec<f32>, TtsError> {
        self.synthesize_reporting(text, settings, seed, |_, _| {})
    }

    /// [`Self::synthesize_seeded`], calling `progress(sentences done, sentences in all)` after each sentence
    /// (for progress bars over long texts).
    pub fn synthesize_reporting(
        &self,
        text: &str,
        settings: &VoiceSettings,
        seed: u64,
        mut progress: impl FnMut(usize, usize),
    ) -> Result<Vec<f32>, TtsError> {
        settings.validate()?;
        if text.trim().is_empty() {
            return Err(TtsError::EmptyText);
        }
        let mut samples = Vec::new();
        let mut spoke = false;
        let sentences = split_pieces(text, PIECE_CHARS);
        for (i, sentence) in sentences.iter().enumerate() {
            let audio = self.sentence(sentence, settings, seed.wrapping_add(i as u64), None);
            spoke |= !audio.is_empty();
            samples.extend(audio);
            progress(i + 1, sentences.len());
        }
        if !spoke {
            return Err(TtsError::NothingToSay);
        }
        Ok(samples)
    }
}

impl EmbeddedVoice {
    /// One sentence: normalise, transcribe, render (with `lexicon`, or the voice's own).
    fn sentence(
        &self,
        sentence: &str,
        settings: &VoiceSettings,
        seed: u64,
        lexicon: Option<&Lexicon>,
    ) -> Vec<f32> {
        let utterance = self.utterance(sentence, lexicon);
        self.voice.render(&utterance, settings, seed)
    }

    /// A sentence normalised and transcribed (with `lexicon`, or the voice's own).
    fn utterance(&self, sentence: &str, lexicon: Option<&Lexicon>) -> g2p::Utterance {
        let lexicon = lexicon.unwrap_or(&self.lexicon);
        g2p::transcribe(&lexicon.normalize(sentence), lexicon)
    }

    /// [`Self::sentence`], with when each word was spoken.
    fn sentence_timed(
        &self,
        sentence: &str,
        settings: &VoiceSettings,
        seed: u64,
        lexicon: Option<&Lexicon>,
    ) -> (Vec<f32>, Vec<SpokenWord>) {
        let utterance = self.utterance(sentence, lexicon);
        let (samples, times) = self.voice.render_timed(&utterance, settings, seed);
        let spoken = utterance
            .phrases
            .iter()
            .flat_map(|phrase| &phrase.words)
            .zip(times)
            .map(|(word, (start, end))| SpokenWord {
                text: word.text.clone(),
                start,
                end,
            })
            .collect();
        (samples, spoken)
    }
}

impl Synthesizer for EmbeddedVoice {
    fn synthesize(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<f32>, TtsError> {
        self.synthesize_seeded(text, settings, 0)
    }

    fn pieces(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<String>, TtsError> {
        settings.validate()?;
        if text.trim().is_empty() {
            return Err(TtsError::EmptyText);
        }
        Ok(split_pieces(text, PIECE_CHARS))
    }

    fn synthesize_piece(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Vec<f32>, TtsError> {
        Ok(self.sentence(piece, settings, index as u64, lexicon))
    }

    fn synthesize_piece_timed(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Option<Timed>, TtsError> {
        Ok(Some(self.sentence_timed(
            piece,
            settings,
            index as u64,
            lexicon,
        )))
    }

    fn engine(&self) -> &'static str {
        "formant"
    }
}
