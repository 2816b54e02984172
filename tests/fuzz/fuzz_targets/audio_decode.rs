//! Any bytes, as an upload: the decoder either refuses them with an `AudioError` or returns usable audio —
//! a sane native rate, finite samples within the duration cap — that resamples to finite 16 kHz samples.
#![no_main]

mod malloc_limit;

use std::time::Duration;

use libfuzzer_sys::fuzz_target;

mod contained;
use sauti::audio::{self, DecodeLimits, SAMPLE_RATE};

const CAP_SECONDS: u64 = 30;

fuzz_target!(
    init: contained::install(),
    |bytes: &[u8]| {
    let limits = DecodeLimits {
        max_duration: Duration::from_secs(CAP_SECONDS),
    };
    let Ok(decoded) = audio::decode(bytes, &limits) else {
        return;
    };
    assert!(
        (1_000..=384_000).contains(&decoded.sample_rate),
        "rate {}",
        decoded.sample_rate
    );
    assert!(!decoded.samples.is_empty(), "accepted with no samples");
    let seconds = decoded.samples.len() as f64 / f64::from(decoded.sample_rate);
    assert!(seconds <= CAP_SECONDS as f64, "{seconds} s passed the cap");
    assert!(decoded.samples.iter().all(|s| s.is_finite()), "non-finite samples");
    let resampled = audio::to_16k(&decoded.samples, decoded.sample_rate);
    assert!(resampled.iter().all(|s| s.is_finite()), "non-finite after resampling");
    let expected = seconds * f64::from(SAMPLE_RATE);
    assert!(
        (resampled.len() as f64 - expected).abs() <= 1.0 + expected * 0.01,
        "{} samples at 16 kHz for {seconds} s",
        resampled.len()
    );
});
