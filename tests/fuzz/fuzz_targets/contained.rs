//! The decoder runs third-party demuxers and decoders inside `catch_unwind` and turns their panics into a
//! "corrupt audio" refusal (src/audio/decode.rs). libFuzzer's panic hook would abort on those anyway; this one
//! lets a panic raised inside a dependency unwind to that containment and reports each such place once. A panic
//! in sauti's own code still aborts, and so does any panic that reaches the fuzz target uncaught.

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock};

pub fn install() {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let abort_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let place = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        if place.contains("/.cargo/registry/") {
            let seen = SEEN.get_or_init(Default::default);
            if seen
                .lock()
                .map(|mut s| s.insert(place.clone()))
                .unwrap_or(false)
            {
                let payload = info.payload();
                let message = payload
                    .downcast_ref::<&str>()
                    .copied()
                    .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
                    .unwrap_or("");
                // ".../registry/src/<index>/symphonia-x-0.5.5/src/f.rs:1" -> "symphonia-x-0.5.5/src/f.rs:1"
                let short = place.rsplit("/registry/src/").next().unwrap_or(&place);
                let short = short.split_once('/').map_or(short, |(_, rest)| rest);
                eprintln!("contained panic in a dependency at {short}: {message}");
            }
            return;
        }
        abort_hook(info);
    }));
}
