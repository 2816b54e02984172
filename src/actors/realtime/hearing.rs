//! What the session does with what its speech detector notices: a caller starting to speak (barge-in, interim
//! transcripts), falling quiet (early recognition; a pause for the end-of-turn model to judge), and a turn
//! ending. A pause the model judges complete is held open when what was recognised of the turn so far ends on a
//! word no Swahili sentence ends on ("…yangu ni", "…kwa"): the caller is plainly not done.

use std::sync::Arc;
use std::time::Duration;

use super::actor::{State, ToSession};
use crate::audio::vad::VadEvent;
use crate::telemetry::metrics::{
    REALTIME_BACKCHANNELS, REALTIME_TURN_ENDS, REALTIME_TURN_JUDGEMENTS,
};

/// How long a judgement waits for the recognition of the turn so far before going by the audio alone: within the
/// second the speech detector holds a pause's audio for its judgement (past it the pause counts as unjudged).
const TRANSCRIPT_WAIT: Duration = Duration::from_millis(800);

impl State {
    /// Act on what the speech detector noticed.
    pub(super) async fn detected(&mut self, events: Vec<VadEvent>) {
        for event in events {
            match event {
                VadEvent::SpeechStarted => {
                    self.interim_restart();
                    self.caller_started(true);
                }
                VadEvent::Paused { id, audio } => self.judge(id, audio),
                VadEvent::Settled(audio) => self.settled(audio),
                // Over before it was long enough to stop the reply: a murmur or a noise, not a turn.
                VadEvent::TurnEnded(..) if std::mem::take(&mut self.barge) => {
                    metrics::counter!(REALTIME_BACKCHANNELS, "kind" => "short").increment(1);
                }
                VadEvent::TurnEnded(audio, by) => {
                    let settled = self.interim_stop();
                    metrics::counter!(REALTIME_TURN_ENDS, "by" => by.name()).increment(1);
                    if self.admit().await {
                        self.turn_ended(audio, settled);
                    }
                }
            }
        }
        self.resumed();
        self.interim_next();
        self.speaking_over();
    }

    /// Have the end-of-turn model judge a pause, off the session; its answer comes back as a message. When the
    /// model hears a complete turn and the turn is being recognised, the words decide too: a turn that ends on
    /// a word that cannot end a sentence is not complete.
    fn judge(&self, pause: u64, audio: Vec<f32>) {
        let turns = Arc::clone(&self.args.services.turns);
        let myself = self.myself.clone();
        let words = self.early.as_ref().map(|early| early.watch());
        tokio::spawn(async move {
            let judged = tokio::task::spawn_blocking(move || turns.complete(&audio)).await;
            let mut complete = judged.unwrap_or(false);
            if let (true, Some(words)) = (complete, words) {
                if let Ok(Some(text)) =
                    tokio::time::timeout(TRANSCRIPT_WAIT, super::early::text_of(words)).await
                {
                    complete = !crate::turns::unfinished(&text);
                }
            }
            let judgement = if complete { "complete" } else { "incomplete" };
            metrics::counter!(REALTIME_TURN_JUDGEMENTS, "judgement" => judgement).increment(1);
            let _ = myself.send_message(ToSession::Judged { pause, complete });
        });
    }
}
