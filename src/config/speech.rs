//! The speech engines' sections: `[tts]` (voices, workers), `[asr]` (the Whisper model) and `[clone]`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// `[tts]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TtsSettings {
    /// Voice of `POST /v1/text-to-speech` examples and of jobs created without a voice.
    pub default_voice: String,
    /// Voice of agent replies when the request names none.
    pub agent_voice: String,
    /// Blocking threads that run synthesis at once.
    pub workers: usize,
    /// Requests that may wait for a worker; beyond that callers get 503 `server_busy`.
    pub queue: usize,
    /// Workers one API key may hold at once (its other requests wait their turn while other keys' requests
    /// run); 0 = all but one (at least one).
    pub workers_per_key: usize,
    /// A server-wide pronunciation lexicon laid over the shipped one (JSON rules, W3C PLS or lexicon TOML);
    /// empty: none. A file that does not read stops start-up with the line at fault.
    pub lexicon_path: PathBuf,
    /// Pronunciation dictionaries one API key may have.
    pub max_dictionaries_per_key: usize,
    /// Neural voices (`[[tts.voices]]`), listed after the two built-in ones.
    pub voices: Vec<VoiceSettingsEntry>,
}

/// One `[[tts.voices]]` entry: a neural voice and where its model lives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VoiceSettingsEntry {
    /// Identifier used in paths and requests.
    pub id: String,
    /// Human-readable name.
    pub name: String,
    /// The engine: `vits` (MMS-TTS or Piper layout, recognised from the files).
    #[serde(default = "vits")]
    pub engine: String,
    /// A model folder or graph file; relative paths are read from `models.dir`.
    pub model: PathBuf,
    /// `<language>-<REGION>`.
    #[serde(default = "sw_tz")]
    pub locale: String,
    /// Speaker gender.
    #[serde(default)]
    pub gender: String,
    /// One-line description.
    #[serde(default)]
    pub description: String,
    /// The model's licence, shown in the voice list (MMS-TTS is CC-BY-NC-4.0: not for commercial use).
    #[serde(default)]
    pub licence: Option<String>,
    /// Speaker of a multi-speaker model.
    #[serde(default)]
    pub speaker: i64,
    /// The `models/catalog.toml` entry that installs the model (named in the inactive voice's detail).
    #[serde(default)]
    pub catalog: Option<String>,
}

fn vits() -> String {
    "vits".into()
}

fn sw_tz() -> String {
    "sw-TZ".into()
}

impl VoiceSettingsEntry {
    /// The voices `config/default.toml` declares: Meta's MMS-TTS Swahili and a Piper Swahili voice, inactive
    /// until their models are installed.
    pub fn shipped() -> Vec<Self> {
        vec![
            Self {
                id: "mms-swh".into(),
                name: "MMS Swahili".into(),
                engine: vits(),
                model: PathBuf::from("mms-tts-swh"),
                locale: "sw-TZ".into(),
                gender: "male".into(),
                description: "Meta MMS-TTS Swahili (VITS); non-commercial licence".into(),
                licence: Some("CC-BY-NC-4.0".into()),
                speaker: 0,
                catalog: Some("mms-tts-swh".into()),
            },
            Self {
                id: "piper-lanfrica".into(),
                name: "Lanfrica (Piper)".into(),
                engine: vits(),
                model: PathBuf::from("piper-sw-lanfrica/sw_CD-lanfrica-medium.onnx"),
                locale: "sw-CD".into(),
                gender: "male".into(),
                description:
                    "Piper Swahili voice sw_CD-lanfrica-medium (VITS), read through our G2P".into(),
                licence: Some("CC-BY-4.0".into()),
                speaker: 0,
                catalog: Some("piper-sw-lanfrica".into()),
            },
        ]
    }
}

impl Default for TtsSettings {
    fn default() -> Self {
        Self {
            default_voice: "zuri".into(),
            agent_voice: "baraka".into(),
            workers: 2,
            queue: 32,
            workers_per_key: 0,
            lexicon_path: PathBuf::new(),
            max_dictionaries_per_key: 100,
            voices: VoiceSettingsEntry::shipped(),
        }
    }
}

/// `[asr]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AsrSettings {
    /// The Whisper model folder (Hugging Face optimum ONNX export), relative to `models.dir`.
    pub model: PathBuf,
    /// The `models/catalog.toml` entry that installs it (named in the 503 detail while it is missing).
    pub catalog: String,
    /// Graph file suffix: `""` for fp32, `"_quantized"` for int8 exports (`encoder_model_quantized.onnx` …).
    pub variant: String,
    /// Recognitions run at once (each with its own ONNX Runtime sessions).
    pub workers: usize,
    /// Requests that may wait for a worker; beyond that callers get 503 `server_busy`.
    pub queue: usize,
    /// Workers one API key may hold at once (its other uploads wait their turn while other keys' uploads are
    /// recognised); 0 = all but one (at least one).
    pub workers_per_key: usize,
    /// Recognitions' model runs gathered into one batched run: the Whisper encoder's windows, and CTC stretches
    /// of one length. 1 = every run alone; above 1 each worker runs up to this many recognitions, whose model
    /// runs share batches.
    pub batch_size: usize,
    /// How long a batch waits for more runs when it is not full, in milliseconds (0: it takes what is waiting).
    pub batch_window_ms: u64,
    /// Tokens decoded at most per 30-second window.
    pub max_new_tokens: usize,
    /// Largest audio upload in bytes (speech recognition and agent audio turns).
    pub max_upload_bytes: usize,
    /// CTC acoustic models preferred for their languages while installed (`[[asr.ctc]]`); other languages,
    /// and theirs while the model is missing, go to Whisper.
    pub ctc: Vec<CtcRoute>,
}

/// `[[asr.ctc]]`: a CTC acoustic model (wav2vec2, XLS-R, MMS) and the languages it recognises.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CtcRoute {
    /// ISO 639-1 codes, e.g. `["sw"]`.
    pub languages: Vec<String>,
    /// Languages Whisper transcribes whose words this model times (forced alignment), e.g. `["en"]` for an
    /// English wav2vec2 model; its own `languages` never reach Whisper while it is installed.
    pub align: Vec<String>,
    /// The model folder (`tools/export_ctc.py` layout), relative to `models.dir`.
    pub model: PathBuf,
    /// The `models/catalog.toml` entry that installs it (named while it is missing).
    pub catalog: String,
    /// Graph file suffix: `""` for `model.onnx`, `"_quantized"` for `model_quantized.onnx`.
    pub variant: String,
    /// Longest stretch of audio read at once, in seconds.
    pub window_seconds: f64,
    /// How much neighbouring windows share, in seconds.
    pub overlap_seconds: f64,
    /// An n-gram language model in ARPA form (KenLM's `lmplz` writes them), relative to `models.dir`; empty for
    /// none. With one, every transcript is decoded by beam search weighed by it.
    pub lm: PathBuf,
    /// The language model's weight.
    pub lm_alpha: f64,
    /// The bonus per word that balances the model's preference for few words.
    pub lm_beta: f64,
    /// Beams the search keeps (with a language model, key terms or a prompt).
    pub beam_width: usize,
    /// What a key term (or a prompt's word) is worth to the beam search.
    pub hotword_weight: f64,
}

impl Default for CtcRoute {
    fn default() -> Self {
        Self {
            languages: vec!["sw".into()],
            align: Vec::new(),
            model: PathBuf::new(),
            catalog: String::new(),
            variant: String::new(),
            window_seconds: 30.0,
            overlap_seconds: 2.0,
            lm: PathBuf::new(),
            lm_alpha: 0.5,
            lm_beta: 1.5,
            beam_width: 100,
            hotword_weight: 10.0,
        }
    }
}

impl AsrSettings {
    /// The first value the types alone do not rule out, as (key, problem).
    pub fn problem(&self) -> Option<(&'static str, String)> {
        let mut taken = std::collections::HashSet::new();
        for route in &self.ctc {
            if route.languages.is_empty() {
                return Some((
                    "asr.ctc.languages",
                    "must name at least one language".into(),
                ));
            }
            if let Some(unknown) = route
                .languages
                .iter()
                .find(|l| !crate::asr::LANGUAGES.contains(&l.as_str()))
            {
                return Some((
                    "asr.ctc.languages",
                    format!(
                        "names {unknown:?}; use codes from {}",
                        crate::asr::LANGUAGES.join(", ")
                    ),
                ));
            }
            if let Some(unknown) = route
                .align
                .iter()
                .find(|l| !crate::asr::LANGUAGES.contains(&l.as_str()))
            {
                return Some((
                    "asr.ctc.align",
                    format!(
                        "names {unknown:?}; use codes from {}",
                        crate::asr::LANGUAGES.join(", ")
                    ),
                ));
            }
            if let Some(twice) = route.languages.iter().find(|l| !taken.insert(l.as_str())) {
                return Some(("asr.ctc.languages", format!("routes {twice:?} twice")));
            }
            if route.model.as_os_str().is_empty() {
                return Some(("asr.ctc.model", "must name the model folder".into()));
            }
            if !(1.0..=120.0).contains(&route.window_seconds) {
                return Some(("asr.ctc.window_seconds", "must be 1 to 120".into()));
            }
            if !(0.0..=route.window_seconds / 2.0).contains(&route.overlap_seconds) {
                return Some((
                    "asr.ctc.overlap_seconds",
                    "must be 0 to half of window_seconds".into(),
                ));
            }
        }
        None
    }
}

impl AsrSettings {
    /// Recognitions running at once: the workers, each with its share of a batch.
    pub fn recognitions_at_once(&self) -> usize {
        self.workers.max(1) * self.batch_size.max(1)
    }
}

impl Default for AsrSettings {
    fn default() -> Self {
        Self {
            model: PathBuf::from("whisper-base"),
            catalog: "whisper-base".into(),
            variant: String::new(),
            workers: 1,
            queue: 8,
            workers_per_key: 0,
            batch_size: 1,
            batch_window_ms: 0,
            max_new_tokens: 224,
            max_upload_bytes: 25 * 1024 * 1024,
            ctc: Vec::new(),
        }
    }
}

/// `[clone]`
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CloneSettings {
    /// Largest reference upload in bytes.
    pub max_upload_bytes: usize,
    /// Cloned voices one key may have.
    pub max_voices_per_key: usize,
    /// Keep each reference recording (as 16 kHz WAV under `data_dir/voices/`) besides the profile.
    pub keep_reference: bool,
    /// Analyses that may run or wait at once; beyond that callers get 503 `server_busy`.
    pub queue: usize,
    /// The voice every clone is built on: empty for the built-in voice nearer the speaker's pitch (`zuri` or
    /// `baraka`), or any voice id of this server (a neural voice is converted after synthesis).
    pub base_voice: String,
    /// `auto` (the formant voice takes the profile; other voices are converted after synthesis) or `dsp`
    /// (always convert after synthesis).
    pub method: String,
    /// A speaker-encoder ONNX graph (file or folder, relative to `models.dir`); when installed, each new voice
    /// reports its speaker similarity to the reference. Empty: none.
    pub speaker_encoder: PathBuf,
    /// The tone-colour converter folder (OpenVoice V2 graphs, relative to `models.dir`); when installed and
    /// `method` is `auto`, new clones are its base voice re-voiced with the speaker's tone colour. Empty: none.
    pub converter: PathBuf,
    /// A new voice whose speaker similarity to its reference (with a speaker encoder) is below this is flagged
    /// with a warning in its metadata.
    pub similarity_floor: f32,
}

impl Default for CloneSettings {
    fn default() -> Self {
        Self {
            max_upload_bytes: 50 * 1024 * 1024,
            max_voices_per_key: 20,
            keep_reference: false,
            queue: 4,
            base_voice: String::new(),
            method: "auto".into(),
            speaker_encoder: PathBuf::from("speaker-resnet34"),
            converter: PathBuf::from("openvoice-v2"),
            similarity_floor: 0.5,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ctc_routes_must_name_known_languages_once_and_sane_windows() {
        let route = |languages: &[&str], window: f64, overlap: f64| AsrSettings {
            ctc: vec![CtcRoute {
                languages: languages.iter().map(|l| l.to_string()).collect(),
                model: "swahili-xlsr".into(),
                window_seconds: window,
                overlap_seconds: overlap,
                ..CtcRoute::default()
            }],
            ..AsrSettings::default()
        };
        assert_eq!(route(&["sw"], 30.0, 2.0).problem(), None);
        let key = |settings: AsrSettings| settings.problem().map(|(key, _)| key);
        assert_eq!(key(route(&[], 30.0, 2.0)), Some("asr.ctc.languages"));
        assert_eq!(key(route(&["swa"], 30.0, 2.0)), Some("asr.ctc.languages"));
        assert_eq!(
            key(route(&["sw", "sw"], 30.0, 2.0)),
            Some("asr.ctc.languages")
        );
        assert_eq!(
            key(route(&["sw"], 0.5, 0.0)),
            Some("asr.ctc.window_seconds")
        );
        assert_eq!(
            key(route(&["sw"], 10.0, 6.0)),
            Some("asr.ctc.overlap_seconds")
        );
        let mut unnamed = route(&["sw"], 30.0, 2.0);
        unnamed.ctc[0].model = PathBuf::new();
        assert_eq!(key(unnamed), Some("asr.ctc.model"));
    }
}
