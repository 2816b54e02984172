//! Speech from text that arrives in parts, as a voice agent's language model writes it (ElevenLabs'
//! `stream-input` and `multi-stream-input` sockets): the voice, settings and dictionaries are checked once
//! when the stream opens; then each context holds its text ([`buffer`]) until a piece is worth speaking and
//! speaks its pieces in order on a task of its own ([`context`]), with word times where the voice gives them.
//!
//! What one socket can make the server do is bounded: the text a context holds and has waiting to be spoken
//! ([`MAX_WAITING_CHARS`]), the contexts it has open and still speaking, and the audio waiting to be written
//! (the socket's bounded queue: a client that stops reading stops the synthesis).

pub mod buffer;
pub mod context;

use super::speech::Prepared;
use super::text::{self, TTS_MAX_CHARS};
use super::Service;
use crate::dictionaries::Locator;
use crate::problem::ApiError;
use crate::tts::pronunciation::Rule;
use crate::tts::VoiceSettings;

pub use context::{Alignment, Context, Said, Spoken};

/// The most characters one context may hold and have waiting to be spoken at once: more is refused until
/// speech catches up (a language model writes far slower than this).
pub const MAX_WAITING_CHARS: usize = TTS_MAX_CHARS;

/// A stream of speech to open, as the caller's protocol states it.
pub struct OpenInput {
    /// The key asking.
    pub owner: String,
    /// The voice.
    pub voice_id: String,
    /// How to speak.
    pub settings: VoiceSettings,
    /// The caller's pronunciation dictionaries, in order.
    pub locators: Vec<Locator>,
    /// Where the caller's protocol lists its voices (named in a refusal).
    pub voices_at: &'static str,
}

/// A voice checked for speaking text that arrives in parts: each piece is spoken with it.
#[derive(Debug, Clone)]
pub struct InputVoice {
    owner: String,
    voice_id: String,
    settings: VoiceSettings,
    rules: Vec<Rule>,
}

impl Service {
    /// Check a stream of speech before any text arrives: the voice (404), the settings (422), the
    /// dictionaries (404/422).
    pub async fn open_speech_input(&self, open: OpenInput) -> Result<InputVoice, ApiError> {
        self.voice_of(&open.owner, &open.voice_id, open.voices_at)
            .await?;
        open.settings.validate()?;
        let rules = self
            .dictionaries
            .rules_for(&open.owner, &open.locators)
            .await?;
        Ok(InputVoice {
            owner: open.owner,
            voice_id: open.voice_id,
            settings: open.settings,
            rules,
        })
    }
}

impl InputVoice {
    /// The voice's id.
    pub fn voice_id(&self) -> &str {
        &self.voice_id
    }

    /// The same voice with other settings and dictionaries (a context that brings its own), checked.
    pub async fn with(
        &self,
        service: &Service,
        settings: Option<VoiceSettings>,
        locators: Option<Vec<Locator>>,
    ) -> Result<InputVoice, ApiError> {
        let mut voice = self.clone();
        if let Some(settings) = settings {
            settings.validate()?;
            voice.settings = settings;
        }
        if let Some(locators) = locators {
            voice.rules = service
                .dictionaries
                .rules_for(&self.owner, &locators)
                .await?;
        }
        Ok(voice)
    }

    /// One piece of text to speak, checked as any synthesis is; `None` when it has nothing to say
    /// (punctuation or spaces on their own are passed over, not refused).
    pub fn piece(&self, text: String) -> Result<Option<Prepared>, ApiError> {
        if !text.chars().any(|c| c.is_ascii_alphanumeric()) {
            return Ok(None);
        }
        let chars = text::speakable("text", &text, TTS_MAX_CHARS)?;
        Ok(Some(Prepared {
            owner: self.owner.clone(),
            voice_id: self.voice_id.clone(),
            text,
            chars,
            max_chars: TTS_MAX_CHARS,
            settings: self.settings,
            rules: self.rules.clone(),
        }))
    }
}
