//! A CTC model folder as `tools/export_ctc.py` writes it (Hugging Face's files for `Wav2Vec2ForCTC`, plus the
//! graph), and what sauti reads from it.
//!
//! ```text
//! swahili-xlsr/
//!   [onnx/]model.onnx      input_values [batch, samples] → logits [batch, frames, vocabulary]
//!   config.json            conv_kernel, conv_stride (the feature encoder), pad_token_id (the CTC blank)
//!   vocab.json             token → id
//!   [tokenizer_config.json]       word_delimiter_token (default "|"), unk_token (default "[UNK]")
//!   [preprocessor_config.json]    do_normalize (default true), sampling_rate (must be 16000)
//! ```
//!
//! Quantised exports name their graph `model_quantized.onnx` (or another suffix given in configuration).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::align::Vocabulary;
use super::SAMPLE_RATE;
use crate::asr::whisper::files::read_json;
use crate::models::ModelError;

/// The files of one model.
#[derive(Debug, Clone)]
pub struct CtcFiles {
    /// The graph.
    pub graph: PathBuf,
    config: PathBuf,
    vocab: PathBuf,
    tokenizer: Option<PathBuf>,
    preprocessor: Option<PathBuf>,
}

#[derive(Debug, Deserialize)]
struct ModelConfig {
    conv_kernel: Vec<usize>,
    conv_stride: Vec<usize>,
    pad_token_id: Option<u32>,
}

#[derive(Debug, Default, Deserialize)]
struct TokenizerConfig {
    word_delimiter_token: Option<String>,
    unk_token: Option<String>,
    pad_token: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(default)]
struct PreprocessorConfig {
    do_normalize: bool,
    sampling_rate: usize,
}

impl Default for PreprocessorConfig {
    fn default() -> Self {
        Self {
            do_normalize: true,
            sampling_rate: SAMPLE_RATE,
        }
    }
}

/// What the files say.
#[derive(Debug, Clone)]
pub struct Described {
    /// The decoder's vocabulary.
    pub vocabulary: Vocabulary,
    /// Zero mean and unit variance before the model reads the waveform.
    pub normalize: bool,
    /// The feature encoder's layers as (kernel, stride).
    pub convolutions: Vec<(usize, usize)>,
}

impl Described {
    /// Samples per output frame.
    pub fn stride(&self) -> usize {
        self.convolutions
            .iter()
            .map(|&(_, s)| s)
            .product::<usize>()
            .max(1)
    }
}

impl CtcFiles {
    /// Find the files in `dir` (the graph directly in it or in `onnx/`), the graph named `model{suffix}.onnx`.
    pub fn find(dir: &Path, suffix: &str) -> Result<Self, ModelError> {
        if !dir.is_dir() {
            return Err(ModelError::Missing {
                path: dir.to_path_buf(),
            });
        }
        let name = format!("model{suffix}.onnx");
        let graph = [dir.join(&name), dir.join("onnx").join(&name)]
            .into_iter()
            .find(|p| p.is_file())
            .ok_or_else(|| ModelError::Missing {
                path: dir.join(&name),
            })?;
        let required = |file: &str| {
            let path = dir.join(file);
            match path.is_file() {
                true => Ok(path),
                false => Err(ModelError::Missing { path }),
            }
        };
        let optional = |file: &str| Some(dir.join(file)).filter(|p| p.is_file());
        Ok(Self {
            graph,
            config: required("config.json")?,
            vocab: required("vocab.json")?,
            tokenizer: optional("tokenizer_config.json"),
            preprocessor: optional("preprocessor_config.json"),
        })
    }

    /// Read the vocabulary and the settings.
    pub fn describe(&self) -> Result<Described, ModelError> {
        let config: ModelConfig = read_json(&self.config)?;
        if config.conv_kernel.is_empty()
            || config.conv_kernel.len() != config.conv_stride.len()
            || config.conv_stride.contains(&0)
        {
            return Err(ModelError::invalid(
                &self.config,
                "conv_kernel and conv_stride must be non-empty lists of the same length, strides above 0",
            ));
        }
        let tokenizer: TokenizerConfig = match &self.tokenizer {
            Some(path) => read_json(path)?,
            None => TokenizerConfig::default(),
        };
        let preprocessor: PreprocessorConfig = match &self.preprocessor {
            Some(path) => read_json(path)?,
            None => PreprocessorConfig::default(),
        };
        if preprocessor.sampling_rate != SAMPLE_RATE {
            return Err(ModelError::invalid(
                self.preprocessor.as_deref().unwrap_or(&self.config),
                format!(
                    "the model reads {} Hz audio; sauti feeds 16000 Hz",
                    preprocessor.sampling_rate
                ),
            ));
        }
        let ids: HashMap<String, u32> = read_json(&self.vocab)?;
        let size = ids.values().max().map_or(0, |&m| m as usize + 1);
        let mut tokens = vec![String::new(); size];
        for (token, &id) in &ids {
            tokens[id as usize] = token.clone();
        }
        // Markers of sequence start and end, and any other special token, write nothing.
        for special in ["<s>", "</s>", "<pad>", "<unk>", "[PAD]", "[UNK]"] {
            if let Some(&id) = ids.get(special) {
                tokens[id as usize].clear();
            }
        }
        let id_of = |token: &str| ids.get(token).copied();
        let blank = config
            .pad_token_id
            .or_else(|| id_of(tokenizer.pad_token.as_deref().unwrap_or("[PAD]")))
            .or_else(|| id_of("<pad>"))
            .ok_or_else(|| ModelError::invalid(&self.config, "no pad_token_id (the CTC blank)"))?;
        let vocabulary = Vocabulary {
            delimiter: id_of(tokenizer.word_delimiter_token.as_deref().unwrap_or("|")),
            unknown: id_of(tokenizer.unk_token.as_deref().unwrap_or("[UNK]"))
                .or_else(|| id_of("<unk>")),
            blank,
            tokens,
        };
        Ok(Described {
            vocabulary,
            normalize: preprocessor.do_normalize,
            convolutions: config
                .conv_kernel
                .into_iter()
                .zip(config.conv_stride)
                .collect(),
        })
    }
}
