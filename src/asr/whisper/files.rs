//! A Whisper model folder as Hugging Face optimum exports it, and the settings read from its JSON files.
//!
//! ```text
//! whisper-base/
//!   config.json  generation_config.json  tokenizer.json  [preprocessor_config.json]
//!   [onnx/]encoder_model.onnx
//!   [onnx/]decoder_model.onnx + decoder_with_past_model.onnx     (preferred: quantisable, no branch)
//!   [onnx/]decoder_model_merged.onnx                             (or this alone)
//! ```
//!
//! Quantised exports name their graphs `*_quantized.onnx` (or another suffix given in configuration).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::models::ModelError;

/// The decoder graphs a folder holds.
#[derive(Debug, Clone, PartialEq)]
pub enum DecoderFiles {
    /// `decoder_model.onnx` for the prompt and `decoder_with_past_model.onnx` for each next token.
    Split {
        /// The first step: prompt + encoder states in, logits and the whole cache out.
        first: PathBuf,
        /// Later steps: one token + the cache in, logits and the self-attention cache out.
        with_past: PathBuf,
    },
    /// `decoder_model_merged.onnx`: both, chosen by the `use_cache_branch` input.
    Merged(PathBuf),
}

/// Every file a Whisper model needs.
#[derive(Debug, Clone, PartialEq)]
pub struct WhisperFiles {
    /// The audio encoder.
    pub encoder: PathBuf,
    /// The text decoder.
    pub decoder: DecoderFiles,
    /// `tokenizer.json`.
    pub tokenizer: PathBuf,
    /// `config.json`.
    pub config: PathBuf,
    /// `generation_config.json`, when published.
    pub generation: Option<PathBuf>,
}

impl WhisperFiles {
    /// Find the files in `dir` (graphs directly in it or in `onnx/`), with graph names ending in `suffix`
    /// (`""` for fp32, `"_quantized"` for onnx-community's int8 graphs).
    pub fn find(dir: &Path, suffix: &str) -> Result<Self, ModelError> {
        if !dir.is_dir() {
            return Err(ModelError::Missing {
                path: dir.to_path_buf(),
            });
        }
        let graph = |stem: &str| -> Option<PathBuf> {
            let name = format!("{stem}{suffix}.onnx");
            [dir.join(&name), dir.join("onnx").join(&name)]
                .into_iter()
                .find(|p| p.is_file())
        };
        let need = |path: Option<PathBuf>, name: &str| {
            path.ok_or_else(|| ModelError::Missing {
                path: dir.join(name),
            })
        };
        let encoder = need(
            graph("encoder_model"),
            &format!("encoder_model{suffix}.onnx"),
        )?;
        let decoder = match (
            graph("decoder_model"),
            graph("decoder_with_past_model"),
            graph("decoder_model_merged"),
        ) {
            (Some(first), Some(with_past), _) => DecoderFiles::Split { first, with_past },
            (_, _, Some(merged)) => DecoderFiles::Merged(merged),
            _ => {
                return Err(ModelError::Missing {
                    path: dir.join(format!(
                        "decoder_model_merged{suffix}.onnx (or decoder_model{suffix}.onnx + decoder_with_past_model{suffix}.onnx)"
                    )),
                })
            }
        };
        let file = |name: &str| Some(dir.join(name)).filter(|p| p.is_file());
        Ok(Self {
            encoder,
            decoder,
            tokenizer: need(file("tokenizer.json"), "tokenizer.json")?,
            config: need(file("config.json"), "config.json")?,
            generation: file("generation_config.json"),
        })
    }
}

/// The parts of `config.json` the runtime needs.
#[derive(Debug, Clone, Deserialize)]
pub struct ModelConfig {
    /// Mel bins of the features (80, or 128 for large-v3).
    #[serde(default = "default_mel_bins")]
    pub num_mel_bins: usize,
    /// Hidden size.
    pub d_model: usize,
    /// Decoder layers (one cache entry each).
    pub decoder_layers: usize,
    /// Decoder attention heads.
    pub decoder_attention_heads: usize,
    /// Longest token sequence the decoder's positions cover.
    #[serde(default = "default_target_positions")]
    pub max_target_positions: usize,
    /// Token ids (fallbacks when there is no generation config).
    #[serde(default)]
    pub decoder_start_token_id: Option<u32>,
    /// End of text.
    #[serde(default)]
    pub eos_token_id: Option<u32>,
    /// Suppressed everywhere.
    #[serde(default)]
    pub suppress_tokens: Option<Vec<u32>>,
    /// Suppressed at the first generated position.
    #[serde(default)]
    pub begin_suppress_tokens: Option<Vec<u32>>,
}

fn default_mel_bins() -> usize {
    80
}

fn default_target_positions() -> usize {
    448
}

/// The parts of `generation_config.json` the runtime needs.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct GenerationConfig {
    /// `<|startoftranscript|>`.
    pub decoder_start_token_id: Option<u32>,
    /// `<|endoftext|>` (a number or a list).
    #[serde(default, deserialize_with = "one_or_first")]
    pub eos_token_id: Option<u32>,
    /// `<|en|>` → id.
    #[serde(default)]
    pub lang_to_id: HashMap<String, u32>,
    /// `transcribe` → id.
    #[serde(default)]
    pub task_to_id: HashMap<String, u32>,
    /// `<|notimestamps|>`.
    pub no_timestamps_token_id: Option<u32>,
    /// Suppressed everywhere.
    pub suppress_tokens: Option<Vec<u32>>,
    /// Suppressed at the first generated position.
    pub begin_suppress_tokens: Option<Vec<u32>>,
    /// The latest first timestamp, in 20 ms steps.
    pub max_initial_timestamp_index: Option<u32>,
}

fn one_or_first<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(u32),
        Many(Vec<u32>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        Some(OneOrMany::One(id)) => Some(id),
        Some(OneOrMany::Many(ids)) => ids.first().copied(),
        None => None,
    })
}

/// Read and parse a JSON file, naming the file in the error.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> Result<T, ModelError> {
    let text = std::fs::read_to_string(path).map_err(|e| ModelError::invalid(path, e))?;
    serde_json::from_str(&text).map_err(|e| ModelError::invalid(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_decoders_are_preferred_and_the_onnx_folder_is_searched() {
        let dir = tempfile::tempdir().unwrap();
        let onnx = dir.path().join("onnx");
        std::fs::create_dir(&onnx).unwrap();
        for name in [
            "encoder_model.onnx",
            "decoder_model.onnx",
            "decoder_with_past_model.onnx",
            "decoder_model_merged.onnx",
            "decoder_model_merged_quantized.onnx",
            "encoder_model_quantized.onnx",
        ] {
            std::fs::write(onnx.join(name), b"x").unwrap();
        }
        for name in ["tokenizer.json", "config.json"] {
            std::fs::write(dir.path().join(name), b"{}").unwrap();
        }
        let files = WhisperFiles::find(dir.path(), "").unwrap();
        assert!(matches!(files.decoder, DecoderFiles::Split { .. }));
        assert_eq!(files.generation, None);
        let quantized = WhisperFiles::find(dir.path(), "_quantized").unwrap();
        assert_eq!(
            quantized.decoder,
            DecoderFiles::Merged(onnx.join("decoder_model_merged_quantized.onnx"))
        );
        std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
        let missing = WhisperFiles::find(dir.path(), "").unwrap_err();
        assert!(missing.to_string().contains("tokenizer.json"), "{missing}");
    }

    #[test]
    fn eos_may_be_a_list() {
        let generation: GenerationConfig = serde_json::from_str(
            r#"{"eos_token_id": [50257, 50256], "lang_to_id": {"<|sw|>": 50318}}"#,
        )
        .unwrap();
        assert_eq!(generation.eos_token_id, Some(50257));
        assert_eq!(generation.lang_to_id["<|sw|>"], 50318);
    }
}
