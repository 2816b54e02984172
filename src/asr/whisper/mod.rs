//! Whisper through ONNX Runtime: optimum's export layout ([`files`]), Whisper's features ([`super::mel`]),
//! greedy decoding over the KV cache ([`decoder`]) with the prompt `<|startoftranscript|><|lang|><|transcribe|>
//! <|notimestamps|>` (after `<|startofprev|>` and the caller's prompt and key terms, when given: the text the
//! model takes as said before), the model's suppressed tokens, and a stop at end-of-text or the length limit. Audio longer
//! than 30 s is decoded window by window, cut at pauses ([`super::windows`]); audio without speech is not
//! decoded at all (Whisper invents text for silence).

pub mod decoder;
pub mod files;
pub mod timestamps;

use std::collections::HashMap;
use std::path::Path;

use tokenizers::Tokenizer;

use self::decoder::{CacheShape, Graphs, Greedy};
use self::files::{read_json, GenerationConfig, ModelConfig, WhisperFiles};
use self::timestamps::Timestamps;
use super::mel::{LogMel, SAMPLE_RATE, WINDOW_SAMPLES};
use super::{windows, AsrError, Hints, Recognizer, Segment, Task, Transcript};
use crate::models::batch::{Batcher, Batching};
use crate::models::{self, ModelError, ModelSettings, SessionPool};

/// How to load a model.
#[derive(Debug, Clone)]
pub struct WhisperOptions {
    /// Recognitions run at once (each gets its own sessions).
    pub sessions: usize,
    /// Runtime library, threads, optimisation.
    pub models: ModelSettings,
    /// At most this many tokens per 30 s window.
    pub max_new_tokens: usize,
    /// Graph file suffix: `""` for fp32, `"_quantized"` for int8 exports.
    pub variant: String,
}

/// The special tokens of the prompt.
#[derive(Debug, Clone)]
struct Prompt {
    start: u32,
    transcribe: Option<u32>,
    translate: Option<u32>,
    no_timestamps: Option<u32>,
    /// `<|startofprev|>`: the text said before follows it.
    previous: Option<u32>,
    /// `sw` → `<|sw|>`'s id; empty for English-only models.
    languages: HashMap<String, u32>,
}

/// A loaded Whisper model.
pub struct Whisper {
    pool: SessionPool<Graphs>,
    /// Windows of concurrent recognitions encoded as one batch (when batching is on).
    encoder: Batcher<Vec<f32>, ort::value::DynValue>,
    mel: LogMel,
    tokenizer: Tokenizer,
    prompt: Prompt,
    greedy: Greedy,
    max_target_positions: usize,
    /// Where the timestamp tokens are, for models that have them.
    timestamps: Option<Timestamps>,
}

impl Whisper {
    /// Load the model in `dir` (see [`files`] for the layout).
    pub fn load(dir: &Path, options: &WhisperOptions) -> Result<Self, ModelError> {
        let files = WhisperFiles::find(dir, &options.variant)?;
        let config: ModelConfig = read_json(&files.config)?;
        let generation: GenerationConfig = match &files.generation {
            Some(path) => read_json(path)?,
            None => GenerationConfig::default(),
        };
        let tokenizer = Tokenizer::from_file(&files.tokenizer)
            .map_err(|e| ModelError::invalid(&files.tokenizer, e))?;
        if config.decoder_attention_heads == 0
            || !config
                .d_model
                .is_multiple_of(config.decoder_attention_heads)
        {
            return Err(ModelError::invalid(
                &files.config,
                "d_model is not a multiple of decoder_attention_heads",
            ));
        }
        let token = |text: &str| tokenizer.token_to_id(text);
        let missing =
            |what: &str| ModelError::invalid(&files.tokenizer, format!("no {what} token"));
        let start = generation
            .decoder_start_token_id
            .or(config.decoder_start_token_id)
            .or_else(|| token("<|startoftranscript|>"))
            .ok_or_else(|| missing("<|startoftranscript|>"))?;
        let end_of_text = generation
            .eos_token_id
            .or(config.eos_token_id)
            .or_else(|| token("<|endoftext|>"))
            .ok_or_else(|| missing("<|endoftext|>"))?;
        let mut languages: HashMap<String, u32> = generation
            .lang_to_id
            .iter()
            .filter_map(|(name, &id)| {
                let code = name.strip_prefix("<|")?.strip_suffix("|>")?;
                Some((code.to_string(), id))
            })
            .collect();
        if languages.is_empty() {
            for code in super::LANGUAGES {
                if let Some(id) = token(&format!("<|{code}|>")) {
                    languages.insert(code.to_string(), id);
                }
            }
        }
        let prompt = Prompt {
            start,
            transcribe: generation
                .task_to_id
                .get("transcribe")
                .copied()
                .or_else(|| token("<|transcribe|>")),
            translate: generation
                .task_to_id
                .get("translate")
                .copied()
                .or_else(|| token("<|translate|>")),
            no_timestamps: generation
                .no_timestamps_token_id
                .or_else(|| token("<|notimestamps|>")),
            previous: token("<|startofprev|>"),
            languages,
        };
        let begin_suppress = generation
            .begin_suppress_tokens
            .or(config.begin_suppress_tokens)
            .unwrap_or_else(|| token("Ġ").into_iter().chain([end_of_text]).collect());
        let greedy = Greedy {
            suppress: generation
                .suppress_tokens
                .or(config.suppress_tokens)
                .unwrap_or_default(),
            begin_suppress,
            end_of_text,
            max_new_tokens: options.max_new_tokens.max(1),
            timestamps: None,
        };
        let timestamps = match (token("<|0.00|>"), prompt.no_timestamps) {
            (Some(first), Some(no_timestamps)) if first == no_timestamps + 1 => Some(Timestamps {
                first,
                no_timestamps,
                max_initial: generation.max_initial_timestamp_index,
            }),
            _ => None,
        };
        let shape = CacheShape {
            layers: config.decoder_layers,
            heads: config.decoder_attention_heads,
            head_dim: config.d_model / config.decoder_attention_heads,
        };
        let threads = models::intra_threads(&options.models);
        let settings = options.models.clone();
        let pool = SessionPool::new(options.sessions, move || {
            Graphs::load(&files.encoder, &files.decoder, shape, &settings, threads)
        })?;
        Ok(Self {
            pool,
            encoder: Batcher::new("whisper-encoder", Batching::alone(options.sessions)),
            mel: LogMel::new(config.num_mel_bins),
            tokenizer,
            prompt,
            greedy,
            max_target_positions: config.max_target_positions,
            timestamps,
        })
    }

    /// The decoder prompt for transcribing `language`.
    pub fn prompt(&self, language: &str) -> Result<Vec<u32>, AsrError> {
        self.prompt_for(language, Task::Transcribe)
    }

    /// The decoder prompt for `task` on speech in `language`.
    pub fn prompt_for(&self, language: &str, task: Task) -> Result<Vec<u32>, AsrError> {
        let mut prompt = vec![self.prompt.start];
        if self.prompt.languages.is_empty() {
            // An English-only model takes no language or task token.
            if language != "en" {
                return Err(AsrError::UnsupportedLanguage(language.to_string()));
            }
            if task == Task::Translate {
                return Err(AsrError::Unavailable(
                    "this Whisper model is English-only and cannot translate".into(),
                ));
            }
        } else {
            let id = self
                .prompt
                .languages
                .get(language)
                .ok_or_else(|| AsrError::UnsupportedLanguage(language.to_string()))?;
            prompt.push(*id);
            match task {
                Task::Transcribe => prompt.extend(self.prompt.transcribe),
                Task::Translate => prompt.push(self.prompt.translate.ok_or_else(|| {
                    AsrError::Unavailable("this Whisper model has no translate task".into())
                })?),
            }
        }
        prompt.extend(self.prompt.no_timestamps);
        Ok(prompt)
    }

    /// The text before the audio, as decoder tokens: `<|startofprev|>`, then the prompt and the key terms
    /// (the last half of the model's positions at most, as Whisper was trained); none without hints or where the
    /// model has no `<|startofprev|>`.
    pub fn context(&self, hints: &Hints) -> Result<Vec<u32>, AsrError> {
        let keyterms = hints.keyterms.join(", ");
        let text: Vec<&str> = [hints.prompt.trim(), keyterms.as_str()]
            .into_iter()
            .filter(|t| !t.is_empty())
            .collect();
        let Some(previous) = self.prompt.previous.filter(|_| !text.is_empty()) else {
            return Ok(Vec::new());
        };
        let encoded = self
            .tokenizer
            .encode(format!(" {}", text.join(" ")), false)
            .map_err(|e| AsrError::Engine(format!("the tokenizer cannot read the prompt: {e}")))?;
        let ids = encoded.get_ids();
        let keep = (self.max_target_positions / 2).saturating_sub(1);
        let mut context = vec![previous];
        context.extend_from_slice(&ids[ids.len().saturating_sub(keep)..]);
        Ok(context)
    }

    /// The log-mel features of one window (`[bins, 3000]` row-major).
    pub fn features(&self, samples: &[f32]) -> Vec<f32> {
        self.mel.features(samples)
    }

    /// Decode one window of at most 30 s: the generated token ids, end-of-text excluded.
    pub fn decode_window(&self, samples: &[f32], language: &str) -> Result<Vec<u32>, AsrError> {
        self.decode_with(
            samples,
            (language, Task::Transcribe),
            &[],
            self.greedy.clone(),
        )
    }

    /// [`Whisper::decode_window`] writing timestamps (none where the model has no timestamp tokens).
    pub fn decode_timed_window(
        &self,
        samples: &[f32],
        language: &str,
    ) -> Result<Vec<u32>, AsrError> {
        let greedy = Greedy {
            timestamps: self.timestamps,
            ..self.greedy.clone()
        };
        self.decode_with(samples, (language, Task::Transcribe), &[], greedy)
    }

    /// Whether the model writes timestamps when asked.
    pub fn has_timestamps(&self) -> bool {
        self.timestamps.is_some()
    }

    /// [`Whisper::decode_window`] after the text of `hints` ([`Whisper::context`]).
    pub fn decode_window_with(
        &self,
        samples: &[f32],
        language: &str,
        hints: &Hints,
    ) -> Result<Vec<u32>, AsrError> {
        let context = self.context(hints)?;
        self.decode_with(
            samples,
            (language, Task::Transcribe),
            &context,
            self.greedy.clone(),
        )
    }

    /// Decode exactly `count` tokens of one window (fewer only where the model's positions run out), never
    /// stopping at end-of-text: benchmarks time a fixed amount of decoding this way.
    pub fn decode_exactly(
        &self,
        samples: &[f32],
        language: &str,
        count: usize,
    ) -> Result<Vec<u32>, AsrError> {
        let mut greedy = self.greedy.clone();
        greedy.suppress.push(greedy.end_of_text);
        greedy.max_new_tokens = count;
        self.decode_with(samples, (language, Task::Transcribe), &[], greedy)
    }

    fn decode_with(
        &self,
        samples: &[f32],
        (language, task): (&str, Task),
        context: &[u32],
        mut greedy: Greedy,
    ) -> Result<Vec<u32>, AsrError> {
        let mut prompt = context.to_vec();
        prompt.extend(self.prompt_for(language, task)?);
        if greedy.timestamps.is_some() && prompt.last() == self.prompt.no_timestamps.as_ref() {
            prompt.pop();
        }
        greedy.max_new_tokens = greedy
            .max_new_tokens
            .min(self.max_target_positions.saturating_sub(prompt.len()));
        let features = self.mel.features(samples);
        let bins = self.mel.bins();
        let decoded = match self.encoder.batching().max {
            1 => self.pool.with(|graphs| {
                let states = graphs.encode(features, bins)?;
                graphs.decode(&states, &prompt, &greedy)
            }),
            _ => {
                let states = self
                    .encoder
                    .run(0, features, |rows| {
                        self.pool
                            .with(|graphs| graphs.encode_rows(rows, bins))
                            .map_err(|e| e.to_string())?
                    })
                    .map_err(AsrError::Engine)?;
                self.pool
                    .with(|graphs| graphs.decode(&states, &prompt, &greedy))
            }
        };
        decoded
            .map_err(|e| AsrError::Engine(e.to_string()))?
            .map_err(AsrError::Engine)
    }

    /// Encode the windows of up to `max` concurrent recognitions as one batch, the first waiting up to `window`
    /// for company. Every window is 30 s of features, so any windows can share a run, and each is encoded as it
    /// would be alone; decoding stays one window at a time.
    pub fn batched(mut self, max: usize, window: std::time::Duration) -> Self {
        let leaders = self.encoder.batching().leaders;
        let batching = Batching {
            max,
            window,
            leaders,
        };
        self.encoder = Batcher::new("whisper-encoder", batching);
        self
    }

    /// Batched encoder runs so far and the windows they held.
    pub fn batch_counts(&self) -> (u64, u64) {
        self.encoder.counts()
    }

    /// The text of generated tokens (special tokens dropped, outer spaces trimmed).
    pub fn text(&self, tokens: &[u32]) -> Result<String, AsrError> {
        self.tokenizer
            .decode(tokens, true)
            .map(|text| text.trim().to_string())
            .map_err(|e| AsrError::Engine(format!("the tokenizer cannot decode the output: {e}")))
    }
}

impl Whisper {
    /// `task` over the whole audio, window by window, stopping once `cancel` is set.
    fn recognise(
        &self,
        samples: &[f32],
        language: &str,
        task: Task,
        hints: &Hints,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Transcript, AsrError> {
        self.prompt_for(language, task)?;
        let context = self.context(hints)?;
        let timed = self.timestamps.filter(|_| hints.timed);
        let greedy = Greedy {
            timestamps: timed,
            ..self.greedy.clone()
        };
        let rate = SAMPLE_RATE as f64;
        let max_seconds = WINDOW_SAMPLES as f64 / rate;
        let mut segments = Vec::new();
        for span in windows::plan(samples, SAMPLE_RATE as u32, max_seconds) {
            let first = ((span.start * rate) as usize).min(samples.len());
            let last = ((span.end * rate).ceil() as usize).clamp(first, samples.len());
            let window = &samples[first..last.min(first + WINDOW_SAMPLES)];
            if cancel.is_cancelled() {
                return Err(AsrError::Cancelled);
            }
            let tokens = self.decode_with(window, (language, task), &context, greedy.clone())?;
            let pieces = match &timed {
                Some(rules) => timestamps::segments(&tokens, rules, span.start, span.end),
                None => vec![(span.start, span.end, tokens)],
            };
            for (start, end, tokens) in pieces {
                let text = self.text(&tokens)?;
                if !text.is_empty() {
                    segments.push(Segment { start, end, text });
                }
            }
        }
        let text = segments
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let (words, timing) = match timed {
            Some(_) => (
                segments.iter().flat_map(Segment::words_by_length).collect(),
                super::WordTiming::WhisperTimestamps,
            ),
            None => (Vec::new(), super::WordTiming::None),
        };
        Ok(Transcript {
            text,
            segments,
            words,
            timing,
        })
    }
}

impl Recognizer for Whisper {
    fn recognise(
        &self,
        samples: &[f32],
        language: &str,
        task: Task,
        hints: &Hints,
        cancel: &crate::cancel::Cancel,
    ) -> Result<Transcript, AsrError> {
        Whisper::recognise(self, samples, language, task, hints, cancel)
    }

    fn engine(&self) -> &'static str {
        "whisper"
    }
}
