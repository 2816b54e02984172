//! The files of a VITS voice on disk: the graph, and the text files beside it that say how to read text (MMS
//! vocabulary and settings, or a Piper config).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::models::ModelError;

/// The files of a voice on disk.
pub(super) struct Files {
    pub(super) graph: PathBuf,
    pub(super) text: TextFiles,
}

pub(super) enum TextFiles {
    Mms {
        vocab: PathBuf,
        config: Option<PathBuf>,
        tokenizer: Option<PathBuf>,
    },
    Piper {
        config: PathBuf,
    },
}

impl Files {
    pub(super) fn find(model: &Path) -> Result<Self, ModelError> {
        let missing = |path: &Path| ModelError::Missing {
            path: path.to_path_buf(),
        };
        if !model.exists() {
            return Err(missing(model));
        }
        let (graph, folder) = if model.is_dir() {
            (find_graph(model)?, model.to_path_buf())
        } else {
            (
                model.to_path_buf(),
                model.parent().unwrap_or(Path::new(".")).to_path_buf(),
            )
        };
        let piper = PathBuf::from(format!("{}.json", graph.display()));
        if piper.is_file() {
            return Ok(Self {
                graph,
                text: TextFiles::Piper { config: piper },
            });
        }
        // Hugging Face exports keep the graph in `onnx/` and the tokenizer files one level up.
        let roots: Vec<PathBuf> = [
            Some(folder.clone()),
            graph.parent().map(Path::to_path_buf),
            folder.parent().map(Path::to_path_buf),
        ]
        .into_iter()
        .flatten()
        .collect();
        let first = |name: &str| roots.iter().map(|r| r.join(name)).find(|p| p.is_file());
        let vocab = first("vocab.json")
            .or_else(|| first("tokens.txt"))
            .ok_or_else(|| missing(&folder.join("vocab.json")))?;
        Ok(Self {
            graph,
            text: TextFiles::Mms {
                vocab,
                config: first("config.json"),
                tokenizer: first("tokenizer_config.json"),
            },
        })
    }
}

/// The graph in a model folder: `model.onnx`, `onnx/model.onnx`, or the only `*.onnx`.
fn find_graph(folder: &Path) -> Result<PathBuf, ModelError> {
    for candidate in [
        folder.join("model.onnx"),
        folder.join("onnx").join("model.onnx"),
    ] {
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    let graphs: Vec<PathBuf> = std::fs::read_dir(folder)
        .map_err(|e| ModelError::invalid(folder, e))?
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "onnx"))
        .collect();
    match graphs.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(ModelError::Missing {
            path: folder.join("model.onnx"),
        }),
        _ => Err(ModelError::invalid(
            folder,
            "holds several *.onnx graphs; name one as the voice's model",
        )),
    }
}

/// Sample rate and blank interleaving of an MMS export.
pub(super) fn mms_settings(
    config: &Option<PathBuf>,
    tokenizer: &Option<PathBuf>,
    metadata: &HashMap<String, String>,
) -> Result<(u32, bool), ModelError> {
    let json = |path: &Path| -> Result<serde_json::Value, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::invalid(path, e))?;
        serde_json::from_str(&text).map_err(|e| ModelError::invalid(path, e))
    };
    let mut rate = metadata.get("sample_rate").and_then(|r| r.parse().ok());
    if let Some(path) = config {
        if let Some(r) = json(path)?.get("sampling_rate").and_then(|r| r.as_u64()) {
            rate = Some(r as u32);
        }
    }
    let mut add_blank = metadata.get("add_blank").map(|b| b == "1" || b == "true");
    if let Some(path) = tokenizer {
        if let Some(b) = json(path)?.get("add_blank").and_then(|b| b.as_bool()) {
            add_blank = Some(b);
        }
    }
    Ok((rate.unwrap_or(16_000), add_blank.unwrap_or(true)))
}

/// The parts of a Piper `*.onnx.json` we use.
#[derive(Debug, Deserialize)]
pub(super) struct PiperConfig {
    pub(super) audio: PiperAudio,
    #[serde(default)]
    phoneme_type: Option<String>,
    pub(super) phoneme_id_map: HashMap<String, Vec<i64>>,
    #[serde(default = "one")]
    pub(super) num_speakers: i64,
    #[serde(default)]
    pub(super) inference: PiperInference,
}

fn one() -> i64 {
    1
}

#[derive(Debug, Deserialize)]
pub(super) struct PiperAudio {
    pub(super) sample_rate: u32,
}

#[derive(Debug, Deserialize)]
#[serde(default)]
pub(super) struct PiperInference {
    pub(super) length_scale: f32,
}

impl Default for PiperInference {
    fn default() -> Self {
        Self { length_scale: 1.0 }
    }
}

impl PiperConfig {
    pub(super) fn read(path: &Path) -> Result<Self, ModelError> {
        let text = std::fs::read_to_string(path).map_err(|e| ModelError::invalid(path, e))?;
        let config: PiperConfig =
            serde_json::from_str(&text).map_err(|e| ModelError::invalid(path, e))?;
        match config.phoneme_type.as_deref() {
            None | Some("espeak") => {}
            Some(other) => {
                return Err(ModelError::invalid(
                    path,
                    format!("phoneme_type {other:?} is not supported (only espeak phonemes)"),
                ))
            }
        }
        if !(8_000..=48_000).contains(&config.audio.sample_rate) {
            return Err(ModelError::invalid(
                path,
                "audio.sample_rate is out of range",
            ));
        }
        Ok(config)
    }
}
