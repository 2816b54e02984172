//! Neural Swahili voices: VITS graphs run through ONNX Runtime, in the two layouts people publish.
//!
//! - **MMS-TTS** (Meta's `facebook/mms-tts-swh` exported from Hugging Face, or a sherpa-onnx export): a folder with
//!   the graph (`model.onnx`, `onnx/model.onnx` or a single `*.onnx`) and its character vocabulary (`vocab.json` or
//!   `tokens.txt`); `config.json` / `tokenizer_config.json` or the graph's metadata give the sample rate and
//!   whether blanks are interleaved. Text is read letter by letter, so it is normalised first (MMS cannot read
//!   digits).
//! - **Piper**: `voice.onnx` + `voice.onnx.json` (`phoneme_id_map`, sample rate, speakers, default scales), fed
//!   with the espeak-compatible IPA of our own G2P ([`ipa`]).
//!
//! Text is split into sentences (and overlong sentences into clauses); each is synthesised on its own — in
//! parallel over idle synthesis workers — resampled to 16 kHz and joined with a short pause.

mod files;
mod graph;
pub mod ipa;
mod parts;
pub mod split;
pub mod tokens;

use std::collections::HashMap;
use std::path::Path;

use self::files::{mms_settings, Files, PiperConfig, TextFiles};
use self::graph::{Inputs, Scales};
use self::split::Split;
use self::tokens::{CharVocab, PhonemeIds};
use super::g2p;
use super::lexicon::Lexicon;
use super::normalize::{split_pieces, PIECE_CHARS};
use super::{SpokenWord, Synthesizer, Timed, TtsError, VoiceSettings};
use crate::audio::resample::to_16k;
use crate::models::{self, ModelError, ModelSettings, SessionPool};

/// Silence between sentences.
const SENTENCE_PAUSE_SECONDS: f32 = 0.2;

/// How text becomes token ids.
enum Front {
    /// MMS-TTS: normalised letters.
    Characters(CharVocab),
    /// Piper: espeak-compatible IPA.
    Phonemes(PhonemeIds),
}

/// Which published layout a voice was loaded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Hugging Face / sherpa-onnx MMS-TTS export.
    Mms,
    /// Piper voice.
    Piper,
}

/// How to load a voice.
#[derive(Debug, Clone)]
pub struct VitsOptions {
    /// Speaker of a multi-speaker model.
    pub speaker: i64,
    /// Sessions run at once (the synthesis worker count).
    pub sessions: usize,
    /// Runtime library, threads, optimisation.
    pub models: ModelSettings,
    /// Pronunciation exceptions.
    pub lexicon: Lexicon,
}

/// How a voice's graphs are run.
enum Engine {
    /// One graph, token ids to waveform.
    Whole { pool: SessionPool, inputs: Inputs },
    /// The prior and the decoder apart ([`split`]): streamed window by window, words timed.
    Split(Split),
}

/// A VITS voice.
pub struct VitsVoice {
    engine: Engine,
    front: Front,
    lexicon: Lexicon,
    layout: Layout,
    sample_rate: u32,
    speaker: i64,
    /// The voice's own length scale (Piper configs may slow or speed a voice); multiplied by 1 / speaking_rate.
    base_length_scale: f32,
}

impl VitsVoice {
    /// Load a voice from a model folder or graph file (the layout is recognised from the files beside it).
    pub fn load(model: &Path, options: &VitsOptions) -> Result<Self, ModelError> {
        let files = Files::find(model)?;
        let (engine, metadata) = match Split::beside(&files.graph) {
            Some((prior, decoder)) => {
                let split = Split::load(&prior, &decoder, options.sessions, &options.models)?;
                (Engine::Split(split), HashMap::new())
            }
            None => {
                let threads = models::intra_threads(&options.models);
                let (graph, settings) = (files.graph.clone(), options.models.clone());
                let pool = SessionPool::new(options.sessions, move || {
                    models::session(&graph, &settings, threads)
                })?;
                let (inputs, metadata) = pool.inspect(|session| {
                    let inputs = Inputs::recognise(&files.graph, session);
                    let metadata: HashMap<String, String> = session
                        .metadata()
                        .ok()
                        .map(|m| {
                            ["sample_rate", "add_blank", "n_speakers"]
                                .into_iter()
                                .filter_map(|k| m.custom(k).map(|v| (k.to_string(), v)))
                                .collect()
                        })
                        .unwrap_or_default();
                    (inputs, metadata)
                })?;
                (
                    Engine::Whole {
                        pool,
                        inputs: inputs?,
                    },
                    metadata,
                )
            }
        };
        let (front, sample_rate, speakers, base_length_scale) = match &files.text {
            TextFiles::Mms {
                vocab,
                config,
                tokenizer,
            } => {
                let (rate, add_blank) = mms_settings(config, tokenizer, &metadata)?;
                let front = if vocab.extension().is_some_and(|e| e == "json") {
                    CharVocab::from_json(vocab, add_blank)?
                } else {
                    CharVocab::from_tokens_txt(vocab, add_blank)?
                };
                let speakers = metadata
                    .get("n_speakers")
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(1);
                (Front::Characters(front), rate, speakers, 1.0)
            }
            TextFiles::Piper { config } => {
                let piper = PiperConfig::read(config)?;
                let ids = PhonemeIds::new(config, piper.phoneme_id_map)?;
                (
                    Front::Phonemes(ids),
                    piper.audio.sample_rate,
                    piper.num_speakers,
                    piper.inference.length_scale,
                )
            }
        };
        if options.speaker < 0 || options.speaker >= speakers.max(1) {
            return Err(ModelError::invalid(
                &files.graph,
                format!(
                    "speaker {} is not one of its {speakers} speakers",
                    options.speaker
                ),
            ));
        }
        let takes_speaker = match &engine {
            Engine::Whole { inputs, .. } => inputs.takes_speaker(),
            Engine::Split(_) => false,
        };
        if speakers > 1 && !takes_speaker {
            return Err(ModelError::invalid(
                &files.graph,
                "a multi-speaker model without a speaker input",
            ));
        }
        Ok(Self {
            layout: match front {
                Front::Characters(_) => Layout::Mms,
                Front::Phonemes(_) => Layout::Piper,
            },
            engine,
            front,
            lexicon: options.lexicon.clone(),
            sample_rate,
            speaker: options.speaker,
            base_length_scale,
        })
    }

    /// The layout the voice was loaded from.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The model's own sample rate (output is always resampled to 16 kHz).
    pub fn sample_rate(&self) -> u32 {
        self.sample_rate
    }

    /// The token ids one sentence is synthesised from (after normalisation and, for Piper, G2P).
    pub fn token_ids(&self, sentence: &str) -> Vec<i64> {
        self.token_ids_with(sentence, &self.lexicon)
    }

    /// [`Self::token_ids`] reading with another lexicon. A character-based (MMS) voice reads the words a
    /// lexicon gives phonemes for in their Swahili spelling, as it cannot take phonemes.
    pub fn token_ids_with(&self, sentence: &str, lexicon: &Lexicon) -> Vec<i64> {
        let words = lexicon.normalize(sentence);
        match &self.front {
            Front::Characters(vocab) => vocab.encode(&lexicon.spell_phoneme_words(&words)),
            Front::Phonemes(ids) => {
                ids.encode(&ipa::transcription(&g2p::transcribe(&words, lexicon)))
            }
        }
    }

    /// The espeak-compatible IPA of one sentence (what a Piper voice reads).
    pub fn ipa(&self, sentence: &str) -> String {
        let words = self.lexicon.normalize(sentence);
        ipa::transcription(&g2p::transcribe(&words, &self.lexicon))
    }

    /// Whether the voice runs split graphs (streamed window by window, words timed).
    pub fn is_split(&self) -> bool {
        matches!(self.engine, Engine::Split(_))
    }

    /// The graph controls for `settings`.
    fn scales(&self, settings: &VoiceSettings) -> Scales {
        Scales {
            noise: settings.noise_scale,
            length: self.base_length_scale / settings.speaking_rate,
            noise_w: settings.noise_scale_duration,
        }
    }

    /// Run the graph on token ids; samples at the model's own rate.
    pub fn run_ids(&self, ids: &[i64], settings: &VoiceSettings) -> Result<Vec<f32>, TtsError> {
        let scales = self.scales(settings);
        match &self.engine {
            Engine::Whole { pool, inputs } => pool
                .with(|session| inputs.run(session, ids, scales, self.speaker))
                .map_err(|e| TtsError::Engine(e.to_string()))?
                .map_err(TtsError::Engine),
            Engine::Split(split) => {
                let latent = split.latent(ids, scales).map_err(TtsError::Engine)?;
                split
                    .decode(&latent, 0..latent.frames())
                    .map_err(TtsError::Engine)
            }
        }
    }

    /// One sentence at 16 kHz; empty when it holds nothing the voice can read.
    fn sentence(
        &self,
        sentence: &str,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Vec<f32>, TtsError> {
        let ids = self.token_ids_with(sentence, lexicon.unwrap_or(&self.lexicon));
        let readable = match &self.front {
            Front::Characters(_) => ids.iter().any(|&id| id != 0),
            Front::Phonemes(_) => ids.len() > 3,
        };
        if !readable {
            return Ok(Vec::new());
        }
        let samples = self.run_ids(&ids, settings)?;
        Ok(to_16k(&samples, self.sample_rate))
    }
}

impl Synthesizer for VitsVoice {
    fn synthesize(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<f32>, TtsError> {
        let mut samples = Vec::new();
        for (index, piece) in self.pieces(text, settings)?.iter().enumerate() {
            samples.extend(self.synthesize_piece(piece, index, settings, None)?);
        }
        if samples.is_empty() {
            return Err(TtsError::NothingToSay);
        }
        Ok(samples)
    }

    fn engine(&self) -> &'static str {
        "vits"
    }

    fn pieces(&self, text: &str, settings: &VoiceSettings) -> Result<Vec<String>, TtsError> {
        settings.validate()?;
        if text.trim().is_empty() {
            return Err(TtsError::EmptyText);
        }
        Ok(split_pieces(text, PIECE_CHARS))
    }

    fn synthesize_piece_timed(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Option<Timed>, TtsError> {
        let (mut samples, mut spoken) = (Vec::new(), Vec::new());
        let timed =
            self.sentence_parts(piece, index, settings, lexicon, true, &mut |part, words| {
                samples.extend(part);
                spoken.extend(words);
                true
            })?;
        Ok(timed.then_some((samples, spoken)))
    }

    fn synthesize_piece_parts(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
        timed: bool,
        part: &mut dyn FnMut(Vec<f32>, Vec<SpokenWord>) -> bool,
    ) -> Result<bool, TtsError> {
        self.sentence_parts(piece, index, settings, lexicon, timed, part)
    }

    fn synthesize_piece(
        &self,
        piece: &str,
        index: usize,
        settings: &VoiceSettings,
        lexicon: Option<&Lexicon>,
    ) -> Result<Vec<f32>, TtsError> {
        let audio = self.sentence(piece, settings, lexicon)?;
        if index == 0 || audio.is_empty() {
            return Ok(audio);
        }
        let pause = (SENTENCE_PAUSE_SECONDS * crate::audio::SAMPLE_RATE as f32) as usize;
        let mut out = vec![0.0; pause];
        out.extend(audio);
        Ok(out)
    }
}
