//! Opening a realtime session (the ConvAI-style socket and Twilio Media Streams alike): what the caller can
//! get wrong is refused before the socket opens (voice, end-of-turn silence, scenario and session); then
//! recognition must be there and a seat free; then the session actor starts.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::Service;
use crate::actors::realtime::{
    self, Outbound, Seat, SeatError, Services, SessionHandle, SessionOptions, TurnGate,
};
use crate::audio::output::OutputFormat;
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;

/// A session to open, as any socket protocol states it.
pub struct OpenSession {
    /// The key asking.
    pub owner: String,
    /// The scenario; `None`: the session's own, or the default.
    pub scenario: Option<String>,
    /// The agent's voice; `None`: the agent's voice.
    pub voice_id: Option<String>,
    /// The session to continue.
    pub session_id: Option<String>,
    /// The silence that ends a turn; `None`: the server's.
    pub end_of_turn_ms: Option<u64>,
    /// The format of the agent's audio on this socket.
    pub format: OutputFormat,
    /// The socket carries a phone call (Twilio Media Streams).
    pub phone: bool,
}

impl Service {
    /// Check a session before its socket opens: how it will run, or the problem with it.
    pub async fn check_session(&self, open: OpenSession) -> Result<SessionOptions, ApiError> {
        let voice_id = self.agent_voice(&open.owner, open.voice_id).await?;
        let settings = &self.settings.realtime;
        let end_of_turn = open.end_of_turn_ms.unwrap_or(settings.end_of_turn_ms);
        let (lo, hi) = crate::config::END_OF_TURN_RANGE_MS;
        if !(lo..=hi).contains(&end_of_turn) {
            return Err(ApiError::unprocessable(format!(
                "`end_of_turn_ms` must be between {lo} and {hi}"
            )));
        }
        let scenario = self
            .check_conversation(&open.owner, &open.scenario, &open.session_id)
            .await?;
        Ok(SessionOptions {
            owner: open.owner,
            scenario: open.scenario,
            session_id: open.session_id,
            voice_id,
            end_of_turn: Duration::from_millis(end_of_turn),
            min_interruption: Duration::from_millis(settings.min_interruption_ms),
            format: open.format,
            interim: self.interim_piece(),
            idle: Duration::from_secs(settings.idle_seconds),
            max_duration: Duration::from_secs(settings.max_session_seconds),
            call: scenario.call.clone(),
            scenario_id: scenario.id.clone(),
            channel: match open.phone {
                true => crate::records::Channel::Twilio,
                false => crate::records::Channel::Realtime,
            },
            recording: self.settings.records.recording,
        })
    }

    /// Samples recognised at a time for interim transcripts: where Swahili is recognised by a CTC model and
    /// `turns.interim_ms` is not 0.
    fn interim_piece(&self) -> usize {
        let ctc = self
            .recognition
            .iter()
            .any(|&(language, engine)| language == crate::asr::DEFAULT_LANGUAGE && engine == "ctc");
        match ctc {
            true => {
                self.settings.turns.interim_ms as usize * crate::audio::SAMPLE_RATE as usize / 1000
            }
            false => 0,
        }
    }

    /// A place for `owner`'s session on this server, once recognition is there to hear it: 503 without a
    /// recognizer or with the server full, 429 with the key's sessions all open.
    pub async fn seat_for(&self, owner: &str) -> Result<Seat, ApiError> {
        self.graph.asr.ensure_available().await?;
        self.seats.take(owner).map_err(|error| match error {
            SeatError::KeyFull(_) => ApiError::rate_limited(error.to_string(), 5),
            SeatError::ServerFull(_) => ApiError::new(ErrorCode::ServerBusy, error.to_string()),
        })
    }

    /// Start the session's actor; its events for the caller come out of the receiver. `gate` admits each of
    /// its turns against the key's limits.
    pub async fn start_session(
        &self,
        options: SessionOptions,
        gate: Arc<dyn TurnGate>,
    ) -> Result<(SessionHandle, mpsc::Receiver<Outbound>), ApiError> {
        let services = Services {
            asr: self.graph.asr.clone(),
            dialogue: self.graph.dialogue.clone(),
            tts: self.graph.tts.clone(),
            gate,
            calls: Arc::clone(&self.calls),
            records: self.records.clone(),
            turns: Arc::clone(&self.turns),
        };
        let (out, events) = mpsc::channel(realtime::OUTBOUND_QUEUE);
        let session = realtime::start(services, options, out)
            .await
            .map_err(|e| ApiError::new(ErrorCode::ServiceUnavailable, e))?;
        Ok((session, events))
    }
}
