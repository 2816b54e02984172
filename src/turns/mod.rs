//! Turn-taking models: Silero VAD, which says which 32 ms of the caller's audio are speech, and Smart Turn v3,
//! which says whether a caller who has paused sounds finished. Both come through the model catalog
//! (`sauti models fetch silero-vad`, `sauti models fetch smart-turn-v3`); without Silero a session uses the
//! energy detector, and without Smart Turn (or with it off, the default) a turn ends after a fixed silence.

pub mod silero;
pub mod smart_turn;
mod unfinished;

pub use unfinished::unfinished;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::audio::vad::{Ending, SpeechJudge, StreamingVad};
use crate::config::{Detector, TurnSettings};
use crate::models::{ModelError, ModelSettings, SessionPool};
use silero::{Silero, SileroStream, CHUNK};
use smart_turn::SmartTurn;

/// The turn-taking models a server has, and how it uses them.
#[derive(Debug, Clone, Default)]
pub struct TurnModels {
    silero: Option<Arc<Silero>>,
    smart_turn: Option<Arc<SmartTurn>>,
    settings: TurnSettings,
}

impl TurnModels {
    /// Load what the settings ask for: a model that is asked for by name (not `auto`) and cannot be loaded
    /// stops start-up (the setting that asked, and why); one that `auto` finds missing leaves the energy
    /// detector or the fixed silence.
    pub fn load(
        settings: &TurnSettings,
        models: &ModelSettings,
    ) -> Result<Self, (&'static str, String)> {
        let silero = match settings.vad {
            Detector::Energy => None,
            wanted => match Silero::load(&models.dir.join(&settings.silero_model), models) {
                Ok(model) => Some(Arc::new(model)),
                Err(error) if wanted == Detector::Auto => {
                    tracing::info!(%error, "no Silero VAD: realtime sessions use the energy detector (sauti models fetch silero-vad)");
                    None
                }
                Err(error) => {
                    let problem = format!("= \"silero\" but it cannot be loaded: {error}");
                    return Err(("turns.vad", problem));
                }
            },
        };
        let smart_turn = if settings.smart_turn {
            let path = models.dir.join(&settings.smart_turn_model);
            let model = SmartTurn::load(&path, models).map_err(|e| {
                let problem = format!("= true: {e} (sauti models fetch smart-turn-v3)");
                ("turns.smart_turn", problem)
            })?;
            Some(Arc::new(model))
        } else {
            None
        };
        if silero.is_some() {
            tracing::info!("Silero VAD ready: realtime sessions detect speech with it");
        }
        if smart_turn.is_some() {
            tracing::info!("Smart Turn ready: realtime turns end when they sound complete");
        }
        Ok(Self {
            silero,
            smart_turn,
            settings: settings.clone(),
        })
    }

    /// The models as given (tests and benchmarks).
    pub fn of(
        silero: Option<Arc<Silero>>,
        smart_turn: Option<Arc<SmartTurn>>,
        settings: TurnSettings,
    ) -> Self {
        Self {
            silero,
            smart_turn,
            settings,
        }
    }

    /// The speech detector's name, for `/readyz` and logs: `silero` or `energy`.
    pub fn detector(&self) -> &'static str {
        if self.silero.is_some() {
            "silero"
        } else {
            "energy"
        }
    }

    /// Whether turns are judged by Smart Turn.
    pub fn judges_turns(&self) -> bool {
        self.smart_turn.is_some()
    }

    /// A detector for one stream whose turns end after `end_of_turn` of silence (transcription sessions).
    pub fn silence(&self, end_of_turn: Duration) -> StreamingVad {
        StreamingVad::with(self.judge(), Ending::Silence(end_of_turn))
    }

    /// A detector for one conversation; `end_of_turn` is the silence that ends a turn when no model judges it.
    pub fn stream(&self, end_of_turn: Duration) -> StreamingVad {
        let ending = match self.smart_turn {
            Some(_) => Ending::Judged {
                pause: Duration::from_millis(self.settings.smart_turn_pause_ms),
                longest: Duration::from_millis(self.settings.smart_turn_longest_ms),
            },
            None => Ending::Silence(end_of_turn),
        };
        let vad = StreamingVad::with(self.judge(), ending);
        match self.settings.early_recognition_ms {
            0 => vad,
            ms => vad.settling_after(Duration::from_millis(ms)),
        }
    }

    /// A fresh judge of speech frames for one stream: Silero when installed, the energy judge otherwise.
    pub fn judge(&self) -> Box<dyn SpeechJudge> {
        match &self.silero {
            Some(model) => Box::new(SileroJudge::new(Arc::clone(model), &self.settings)),
            None => Box::new(crate::audio::vad::EnergyJudge::default()),
        }
    }

    /// Whether the turn whose last seconds are `audio` sounds complete (blocking: run it off the session).
    /// A turn the model cannot judge is taken as not complete: the longest silence still ends it.
    pub fn complete(&self, audio: &[f32]) -> bool {
        let Some(model) = &self.smart_turn else {
            return true;
        };
        match model.complete(audio) {
            Ok(probability) => probability > self.settings.smart_turn_threshold,
            Err(error) => {
                tracing::warn!(%error, "Smart Turn failed; the turn waits for the longest silence");
                false
            }
        }
    }
}

/// Silero's probabilities as speech frames, with hysteresis: a frame starts speech above the threshold, and
/// speech goes on until a frame falls 0.15 below it (as Silero's own segmenter does).
struct SileroJudge {
    model: Arc<Silero>,
    stream: SileroStream,
    threshold: f32,
    failed: bool,
}

impl SileroJudge {
    fn new(model: Arc<Silero>, settings: &TurnSettings) -> Self {
        Self {
            stream: model.stream(),
            model,
            threshold: settings.vad_threshold,
            failed: false,
        }
    }
}

impl SpeechJudge for SileroJudge {
    fn frame_len(&self) -> usize {
        CHUNK
    }

    fn is_speech(&mut self, frame: &[f32], in_turn: bool) -> bool {
        match self.stream.probability(frame, &self.model) {
            Ok(p) if in_turn => p >= self.threshold - 0.15,
            Ok(p) => p >= self.threshold,
            Err(error) => {
                if !std::mem::replace(&mut self.failed, true) {
                    tracing::warn!(%error, "Silero VAD failed on a frame; it counts as silence");
                }
                false
            }
        }
    }
}

/// One-thread sessions of a turn-taking graph, up to `per_core` a core: `path` (a `.onnx` file, or the folder
/// holding `file`), refused unless its inputs are `inputs` (it would be some other model). The file, for errors.
fn graph(
    path: &Path,
    file: &str,
    per_core: usize,
    inputs: &[&str],
    what: &str,
    settings: &ModelSettings,
) -> Result<(SessionPool, PathBuf), ModelError> {
    let graph = match path.is_dir() {
        true => path.join(file),
        false => path.to_path_buf(),
    };
    let limit = std::thread::available_parallelism().map_or(2, |n| n.get() * per_core);
    let (made, settings) = (graph.clone(), settings.clone());
    let pool = SessionPool::new(limit, move || crate::models::session(&made, &settings, 1))?;
    let found = pool.inspect(|session| {
        session
            .inputs()
            .iter()
            .map(|i| i.name().to_string())
            .collect::<Vec<_>>()
    })?;
    if found != inputs {
        return Err(ModelError::invalid(
            &graph,
            format!(
                "not a {what} graph (inputs {found:?}, expected {})",
                inputs.join(", ")
            ),
        ));
    }
    Ok((pool, graph))
}
