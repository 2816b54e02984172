//! The native `/v1` API: speech (answered, streamed, timed, as jobs), recognition, cloning, voices,
//! pronunciation dictionaries, the voice agent and its realtime sockets (the ConvAI-style events and Twilio
//! Media Streams). Each handler translates between the wire and one operation of [`crate::ops`].

pub mod agent;
pub mod cloning;
pub mod dictionaries;
pub mod formats;
pub mod realtime;
pub mod recognition;
pub mod speech;
pub mod speech_stream;
pub mod streaming;
pub mod synthesis_body;
pub mod usage;
pub mod voices;
pub mod webhook;
