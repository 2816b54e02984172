//! The compatibility dialects: ElevenLabs' paths under `/elevenlabs/v1` and OpenAI's `/v1/audio` and
//! `/v1/models`, so their official SDKs work unchanged. Each handler translates the dialect's request into one
//! operation of [`crate::ops`] and the result into the dialect's answer.

pub mod elevenlabs;
pub mod openai;
