//! Whisper's graphs and the greedy loop over them: the encoder once per window, the decoder once on the
//! prompt, then one token at a time feeding back its key/value cache (the prefix is never run again).
//!
//! Cache tensors follow optimum's names: inputs `past_key_values.{layer}.{decoder|encoder}.{key|value}`, outputs
//! `present.…`. The cross-attention (`encoder`) entries come from the first step and stay fixed; the
//! self-attention (`decoder`) entries grow by one position a step.

use std::path::Path;

use ort::session::{Session, SessionInputValue};
use ort::value::{DynValue, Tensor};

use super::files::DecoderFiles;
use crate::models::{self, ModelError, ModelSettings};

/// Shape of the cache: layers, heads and head size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CacheShape {
    /// Decoder layers.
    pub layers: usize,
    /// Attention heads.
    pub heads: usize,
    /// Size of one head.
    pub head_dim: usize,
}

/// How tokens are chosen at each step.
#[derive(Debug, Clone)]
pub struct Greedy {
    /// Never chosen.
    pub suppress: Vec<u32>,
    /// Never chosen as the first generated token.
    pub begin_suppress: Vec<u32>,
    /// Ends the text.
    pub end_of_text: u32,
    /// At most this many generated tokens.
    pub max_new_tokens: usize,
    /// Timestamps written as Whisper's rules allow (none: `<|notimestamps|>` is in the prompt).
    pub timestamps: Option<super::timestamps::Timestamps>,
}

enum Decoders {
    Split { first: Session, with_past: Session },
    Merged(Session),
}

/// One set of sessions (encoder + decoder); a pool hands each concurrent caller its own.
pub struct Graphs {
    encoder: Session,
    decoders: Decoders,
    shape: CacheShape,
}

fn engine(e: impl std::fmt::Display) -> String {
    e.to_string()
}

impl Graphs {
    /// Build the sessions.
    pub fn load(
        encoder: &Path,
        decoder: &DecoderFiles,
        shape: CacheShape,
        settings: &ModelSettings,
        threads: usize,
    ) -> Result<Self, ModelError> {
        let encoder_session = models::session(encoder, settings, threads)?;
        check_inputs(encoder, &encoder_session, &["input_features"])?;
        let decoders = match decoder {
            DecoderFiles::Split { first, with_past } => {
                let first_session = models::session(first, settings, threads)?;
                check_inputs(
                    first,
                    &first_session,
                    &["input_ids", "encoder_hidden_states"],
                )?;
                let past_session = models::session(with_past, settings, threads)?;
                check_inputs(
                    with_past,
                    &past_session,
                    &["input_ids", "past_key_values.0.decoder.key"],
                )?;
                Decoders::Split {
                    first: first_session,
                    with_past: past_session,
                }
            }
            DecoderFiles::Merged(path) => {
                let session = models::session(path, settings, threads)?;
                check_inputs(
                    path,
                    &session,
                    &["input_ids", "encoder_hidden_states", "use_cache_branch"],
                )?;
                Decoders::Merged(session)
            }
        };
        Ok(Self {
            encoder: encoder_session,
            decoders,
            shape,
        })
    }

    /// Encoder states for one window of features (`[bins, 3000]` row-major).
    pub fn encode(&mut self, features: Vec<f32>, bins: usize) -> Result<DynValue, String> {
        let frames = features.len() / bins.max(1);
        let input = Tensor::from_array(([1usize, bins, frames], features)).map_err(engine)?;
        let name = self.encoder.outputs()[0].name().to_string();
        let mut outputs = self
            .encoder
            .run(vec![("input_features", SessionInputValue::from(input))])
            .map_err(engine)?;
        outputs
            .remove(name.as_str())
            .ok_or_else(|| "the encoder gave no output".to_string())
    }

    /// Encoder states for several windows of features at once, one value (`[1, frames, width]`) per window:
    /// each row of the batch is encoded on its own, so a window's states are those it has alone.
    pub fn encode_rows(
        &mut self,
        rows: Vec<Vec<f32>>,
        bins: usize,
    ) -> Result<Vec<DynValue>, String> {
        let count = rows.len();
        let frames = rows.first().map_or(0, |row| row.len() / bins.max(1));
        let input = Tensor::from_array(([count, bins, frames], rows.concat())).map_err(engine)?;
        let outputs = self
            .encoder
            .run(vec![("input_features", SessionInputValue::from(input))])
            .map_err(engine)?;
        let (shape, states) = outputs[0].try_extract_tensor::<f32>().map_err(engine)?;
        let dims: Vec<usize> = shape.iter().map(|&d| d.max(0) as usize).collect();
        let [_, steps, width] = dims[..] else {
            return Err(format!("the encoder gave states of shape {dims:?}"));
        };
        states
            .chunks_exact((steps * width).max(1))
            .take(count)
            .map(|row| {
                Tensor::from_array(([1usize, steps, width], row.to_vec()))
                    .map(|t| t.into_dyn())
                    .map_err(engine)
            })
            .collect()
    }

    /// Greedy decoding after `prompt`, over the encoder `states`: the generated tokens, end-of-text excluded.
    pub fn decode(
        &mut self,
        states: &DynValue,
        prompt: &[u32],
        greedy: &Greedy,
    ) -> Result<Vec<u32>, String> {
        let CacheShape {
            layers,
            heads,
            head_dim,
        } = self.shape;
        let names = CacheNames::new(layers);
        // The cache: `past_key_values.*` name → value, filled by the first step.
        let mut cache: Vec<(String, DynValue)> = Vec::with_capacity(layers * 4);
        let mut tokens: Vec<u32> = Vec::new();
        let mut ids: Vec<i64> = prompt.iter().map(|&t| i64::from(t)).collect();
        for step in 0..greedy.max_new_tokens {
            let input_ids =
                Tensor::from_array(([1usize, ids.len()], ids.clone())).map_err(engine)?;
            let mut feeds: Vec<(String, SessionInputValue<'_>)> =
                vec![("input_ids".into(), input_ids.into())];
            let session = match &mut self.decoders {
                Decoders::Split { first, .. } if step == 0 => {
                    feeds.push(("encoder_hidden_states".into(), states.view().into()));
                    first
                }
                Decoders::Split { with_past, .. } => {
                    for (name, value) in &cache {
                        feeds.push((name.clone(), value.view().into()));
                    }
                    with_past
                }
                Decoders::Merged(merged) => {
                    feeds.push(("encoder_hidden_states".into(), states.view().into()));
                    feeds.push((
                        "use_cache_branch".into(),
                        Tensor::from_array(([1usize], vec![step > 0]))
                            .map_err(engine)?
                            .into(),
                    ));
                    if step == 0 {
                        // Ignored on the first-step branch; any shape will do.
                        for name in names.past.iter() {
                            let empty = Tensor::from_array((
                                [1usize, heads, 1, head_dim],
                                vec![0f32; heads * head_dim],
                            ))
                            .map_err(engine)?;
                            feeds.push((name.clone(), empty.into()));
                        }
                    } else {
                        for (name, value) in &cache {
                            feeds.push((name.clone(), value.view().into()));
                        }
                    }
                    merged
                }
            };
            let mut outputs = session.run(feeds).map_err(engine)?;
            let next = {
                let (shape, logits) = outputs["logits"]
                    .try_extract_tensor::<f32>()
                    .map_err(engine)?;
                let vocab = usize::try_from(*shape.last().unwrap_or(&0)).unwrap_or(0);
                if vocab == 0 || logits.len() < vocab {
                    return Err("the decoder gave no logits".into());
                }
                let logits = &logits[logits.len() - vocab..];
                match &greedy.timestamps {
                    Some(rules) => super::timestamps::pick(logits, greedy, rules, &tokens),
                    None => pick(logits, greedy, step == 0),
                }
            };
            // Keep the new self-attention entries, and the cross-attention ones from the first step.
            let mut updated = Vec::with_capacity(layers * 4);
            for (present, past) in names.present.iter().zip(&names.past) {
                let fixed = past.contains(".encoder.");
                if fixed && step > 0 {
                    continue;
                }
                let value = outputs
                    .remove(present.as_str())
                    .ok_or_else(|| format!("the decoder gave no `{present}`"))?;
                updated.push((past.clone(), value));
            }
            drop(outputs);
            if step > 0 {
                // Cross-attention entries carry over unchanged.
                updated.extend(
                    cache
                        .drain(..)
                        .filter(|(name, _)| name.contains(".encoder.")),
                );
            }
            updated.sort_by_key(|(name, _)| names.order(name));
            cache = updated;

            let Some(token) = next else { break };
            if token == greedy.end_of_text {
                break;
            }
            tokens.push(token);
            ids = vec![i64::from(token)];
        }
        Ok(tokens)
    }
}

/// The highest-scoring token that is not suppressed (the first of equals, as argmax takes it).
fn pick(logits: &[f32], greedy: &Greedy, first: bool) -> Option<u32> {
    let mut best: Option<(usize, f32)> = None;
    for (id, &score) in logits.iter().enumerate() {
        if score.is_nan() || best.is_some_and(|(_, top)| score <= top) {
            continue;
        }
        let token = id as u32;
        if greedy.suppress.contains(&token) || (first && greedy.begin_suppress.contains(&token)) {
            continue;
        }
        best = Some((id, score));
    }
    best.map(|(id, _)| id as u32)
}

/// The cache's input and output names, in layer order.
struct CacheNames {
    past: Vec<String>,
    present: Vec<String>,
}

impl CacheNames {
    fn new(layers: usize) -> Self {
        let mut past = Vec::with_capacity(layers * 4);
        for layer in 0..layers {
            for part in [
                "decoder.key",
                "decoder.value",
                "encoder.key",
                "encoder.value",
            ] {
                past.push(format!("past_key_values.{layer}.{part}"));
            }
        }
        let present = past
            .iter()
            .map(|name| name.replacen("past_key_values", "present", 1))
            .collect();
        Self { past, present }
    }

    fn order(&self, name: &str) -> usize {
        self.past
            .iter()
            .position(|p| p == name)
            .unwrap_or(usize::MAX)
    }
}

fn check_inputs(path: &Path, session: &Session, needed: &[&str]) -> Result<(), ModelError> {
    for name in needed {
        if !session.inputs().iter().any(|input| input.name() == *name) {
            return Err(ModelError::invalid(
                path,
                format!("the graph has no `{name}` input; is this a Whisper export from optimum?"),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suppressed_tokens_are_skipped_and_ties_go_to_the_first() {
        let greedy = Greedy {
            suppress: vec![3],
            begin_suppress: vec![1],
            end_of_text: 4,
            max_new_tokens: 10,
            timestamps: None,
        };
        let logits = [0.5, 2.0, 1.0, 9.0, 2.0];
        assert_eq!(pick(&logits, &greedy, false), Some(1));
        assert_eq!(pick(&logits, &greedy, true), Some(4));
        assert_eq!(pick(&[f32::NAN, 0.0, 0.0], &greedy, false), Some(1));
    }
}
