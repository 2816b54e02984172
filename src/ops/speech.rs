//! Synthesis, however it is asked for: answered at once, queued as a job, streamed, or with word times. One
//! path prepares every request: the voice is the caller's (checked against the shared store), the text is
//! speakable and short enough, the settings in range, the dictionaries the caller's; then the prepared
//! request is spoken in the way its protocol needs.

use std::sync::Arc;

use super::stream::{Opened, StreamRequest};
use super::text::{self, TTS_SYNC_MAX_CHARS};
use super::usage::{self, Usage};
use super::Service;
use crate::actors::jobs::NewJob;
use crate::audio::output::OutputFormat;
use crate::dictionaries::Locator;
use crate::problem::ApiError;
use crate::storage::usage::UsageKind;
use crate::storage::JobRecord;
use crate::tts::lexicon::Lexicon;
use crate::tts::pronunciation::Rule;
use crate::tts::{SpokenWord, VoiceSettings};

/// A synthesis request, as any protocol states it.
pub struct Speak {
    /// The key asking (whose voices, dictionaries and share of the workers are used).
    pub owner: String,
    /// The voice.
    pub voice_id: String,
    /// The text.
    pub text: String,
    /// The member holding the text in the caller's protocol (`text`, `input`).
    pub field: &'static str,
    /// The text's most characters on this path.
    pub max_chars: usize,
    /// How to speak.
    pub settings: VoiceSettings,
    /// The caller's pronunciation dictionaries, in order.
    pub locators: Vec<Locator>,
    /// Where the caller's protocol lists its voices (named in a 404's detail).
    pub voices_at: &'static str,
}

/// A synthesis request that passed every check: what is left can fail only for want of capacity, or in the
/// engine.
pub struct Prepared {
    pub(super) owner: String,
    pub(super) voice_id: String,
    pub(super) text: String,
    pub(super) chars: usize,
    pub(super) max_chars: usize,
    pub(super) settings: VoiceSettings,
    pub(super) rules: Vec<Rule>,
}

impl Service {
    /// Check a synthesis request, in the order a caller can act on: the voice (404), the text and settings
    /// (422), the dictionaries (404/422).
    pub async fn prepare_speech(&self, speak: Speak) -> Result<Prepared, ApiError> {
        self.voice_of(&speak.owner, &speak.voice_id, speak.voices_at)
            .await?;
        let chars = text::speakable(speak.field, &speak.text, speak.max_chars)?;
        speak.settings.validate()?;
        let rules = self
            .dictionaries
            .rules_for(&speak.owner, &speak.locators)
            .await?;
        Ok(Prepared {
            owner: speak.owner,
            voice_id: speak.voice_id,
            text: speak.text,
            chars,
            max_chars: speak.max_chars,
            settings: speak.settings,
            rules,
        })
    }
}

impl Prepared {
    /// The text's length in characters.
    pub fn chars(&self) -> usize {
        self.chars
    }

    /// The voice.
    pub fn voice_id(&self) -> &str {
        &self.voice_id
    }

    /// Whether the text is too long to be waited for (spec §4.1): it is synthesised as a job instead.
    pub fn needs_a_job(&self) -> bool {
        self.chars > TTS_SYNC_MAX_CHARS
    }

    /// The dictionaries laid over the server's lexicon, once the text read with them is measured (422 when it
    /// reads longer than the path allows).
    async fn lexicon(&self, service: &Service) -> Result<Option<Arc<Lexicon>>, ApiError> {
        Ok(service
            .dictionaries
            .reading(self.rules.clone(), &self.text, self.max_chars)
            .await?)
    }

    /// Charge the key the text's characters, run `work`, and give them back if it fails (spec: a request
    /// that is refused or fails costs nothing).
    async fn charged<T>(
        &self,
        service: &Service,
        work: impl std::future::Future<Output = Result<T, ApiError>>,
    ) -> Result<T, ApiError> {
        let chars = self.chars as f64;
        service
            .charge(&self.owner, UsageKind::Characters, &self.voice_id, chars)
            .await?;
        match work.await {
            Ok(done) => {
                usage::record(Usage::Characters(self.chars));
                Ok(done)
            }
            Err(error) => {
                service
                    .refund(&self.owner, UsageKind::Characters, &self.voice_id, chars)
                    .await;
                Err(error)
            }
        }
    }

    /// The speech, 16 kHz mono samples.
    pub async fn samples(self, service: &Service) -> Result<Vec<f32>, ApiError> {
        let lexicon = self.lexicon(service).await?;
        let tts = &service.graph.tts;
        let work = async {
            let text = &self.text;
            Ok(tts
                .synthesize(&self.owner, &self.voice_id, text, self.settings, lexicon)
                .await?)
        };
        self.charged(service, work).await
    }

    /// The speech encoded in `format`.
    pub async fn encoded(
        self,
        service: &Service,
        format: OutputFormat,
    ) -> Result<Vec<u8>, ApiError> {
        let samples = self.samples(service).await?;
        super::encode::encode(service, format, samples).await
    }

    /// The speech with the time of each word.
    pub async fn timed(self, service: &Service) -> Result<(Vec<f32>, Vec<SpokenWord>), ApiError> {
        let lexicon = self.lexicon(service).await?;
        let tts = &service.graph.tts;
        let work = async {
            let text = &self.text;
            Ok(tts
                .synthesize_timed(&self.owner, &self.voice_id, text, self.settings, lexicon)
                .await?)
        };
        self.charged(service, work).await
    }

    /// The speech as a stream of pieces, its first piece made (so what fails before it is still the
    /// request's error); `timed` pieces carry word times.
    pub async fn stream(self, service: &Service, timed: bool) -> Result<Opened, ApiError> {
        let lexicon = self.lexicon(service).await?;
        let request = self.stream_request(lexicon, timed);
        self.charged(service, super::stream::open(service, request))
            .await
    }

    /// [`Prepared::stream`] with word times where the voice can tell them: the stream, and whether its
    /// pieces carry them.
    pub async fn stream_timed_if_possible(
        self,
        service: &Service,
    ) -> Result<(Opened, bool), ApiError> {
        let lexicon = self.lexicon(service).await?;
        let request = self.stream_request(lexicon, true);
        let opening = super::stream::open_timed_if_possible(service, request);
        self.charged(service, opening).await
    }

    fn stream_request(&self, lexicon: Option<Arc<Lexicon>>, timed: bool) -> StreamRequest<'_> {
        StreamRequest {
            owner: &self.owner,
            voice_id: &self.voice_id,
            text: &self.text,
            settings: self.settings,
            lexicon,
            timed,
        }
    }

    /// The speech queued as a job: its record. The text read with the dictionaries is measured now (the
    /// runner measures it again when it starts), and the job keeps the rules, so a dictionary deleted later
    /// does not change it.
    pub async fn queue(self, service: &Service) -> Result<JobRecord, ApiError> {
        self.lexicon(service).await?;
        let job = NewJob {
            owner: self.owner.clone(),
            text: self.text.clone(),
            voice_id: self.voice_id.clone(),
            settings: self.settings,
            pronunciation: self.rules.clone(),
        };
        self.charged(service, async { Ok(service.graph.jobs.create(job).await?) })
            .await
    }
}
