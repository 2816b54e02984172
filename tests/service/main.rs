//! Black-box tests of the real `sauti` binary: `sauti serve` on a free port (or two replicas sharing PostgreSQL,
//! Redis and S3 with `SAUTI_TEST_REPLICAS=2`) and the command line. One test binary (each former
//! `tests/NAME.rs` is the module `NAME`: `cargo test --test service voice_agent::`); its tests run in parallel.

#[path = "../common/mod.rs"]
mod common;

mod api_keys;
mod cli;
mod cli_models;
mod cors;
mod ctc_service;
mod elevenlabs_sdk;
mod full_disk;
mod hard_edges;
mod installed_models;
mod job_audio_ranges;
mod key_ids;
mod limits_and_readiness;
mod models_fetch;
mod models_import;
mod neural_voices;
mod observability;
mod openai_realtime;
mod openai_sdk;
mod openapi;
mod output_formats;
mod path_ids;
mod playground;
mod pronunciation_bounds;
mod pronunciation_dictionaries;
mod pronunciation_lexicon;
mod quotas;
mod readme_tour;
mod replicas;
mod runtime_log;
mod safety_rules;
mod service_http;
mod service_lifecycle;
mod shared_limits;
mod speech_input_sockets;
mod speech_to_text;
mod streaming;
mod synthesis_costs;
mod voice_agent;
mod voice_agent_llm;
mod voice_cloning;
mod voice_cloning_neural;
mod voice_cloning_quality;
mod voice_cloning_storage;
mod voice_frameworks;
