//! Any request body sent as `multipart/form-data`: reading the form, picking the audio part and decoding it
//! ends in a form or in a client error (400, 413, 415 or 422) — never a panic, a hang or a server error.
#![no_main]

mod malloc_limit;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;

mod contained;
#[path = "../../common/upload_path.rs"]
mod upload_path;

/// Small so that the limit paths are reached by small inputs.
const AUDIO_LIMIT: usize = 64 * 1024;
const BOUNDARY: &str = "sauti-fuzz";

fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime")
    })
}

fuzz_target!(
    init: contained::install(),
    |body: &[u8]| {
    let outcome = runtime().block_on(upload_path::read_upload(body.to_vec(), BOUNDARY, AUDIO_LIMIT));
    upload_path::assert_audio_or_client_error(&outcome);
});
