//! The engines and libraries in process: the text front end, the VITS, Whisper, CTC and speaker-encoder
//! models, audio decoding, the dialogue scenarios, the storage backends, and their property tests. One test
//! binary (each former `tests/NAME.rs` is the module `NAME`); its tests run in parallel.

#[path = "../common/mod.rs"]
mod common;

mod agent_eval;
mod agent_properties;
mod audio_declared_sizes;
mod audio_decode;
mod audio_properties;
mod batching;
mod ctc;
mod ctc_beam;
mod embedded_voice;
mod scenario_guards;
mod scenarios;
mod speaker_encoder;
mod storage_conformance;
mod text_front_end;
mod text_properties;
mod tone_colour;
mod turn_models;
mod vits;
mod vits_parts;
mod whisper;
