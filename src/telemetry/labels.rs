//! Label values that would name one tenant's resources are replaced before a series is made: `/metrics` may be
//! readable by anyone who reaches the port, and a series per cloned voice would both list every key's voices and
//! grow without bound (deleted voices' series are never dropped). Cloned voices share the one value `cloned`;
//! the server's own voices keep their ids.

use metrics::{
    Counter, Gauge, Histogram, Key, KeyName, Label, Metadata, Recorder, SharedString, Unit,
};

/// The label value every cloned voice is counted under.
pub const CLONED_VOICE: &str = "cloned";

/// Whether a voice id names a cloned voice (`cv_` and 16 hex digits).
pub fn is_cloned_voice(voice_id: &str) -> bool {
    voice_id
        .strip_prefix("cv_")
        .is_some_and(|rest| rest.len() == 16 && rest.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The key with every cloned voice id in a `voice` label replaced by [`CLONED_VOICE`].
pub fn scrub(key: &Key) -> Key {
    let private = |label: &Label| label.key() == "voice" && is_cloned_voice(label.value());
    if !key.labels().any(private) {
        return key.clone();
    }
    let labels: Vec<Label> = key
        .labels()
        .map(|label| {
            if private(label) {
                Label::new("voice", CLONED_VOICE)
            } else {
                label.clone()
            }
        })
        .collect();
    Key::from_parts(key.name_shared(), labels)
}

/// A recorder that scrubs every key before the inner recorder sees it.
pub struct Scrubbed<R>(pub R);

impl<R: Recorder> Recorder for Scrubbed<R> {
    fn describe_counter(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.0.describe_counter(key, unit, description);
    }

    fn describe_gauge(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.0.describe_gauge(key, unit, description);
    }

    fn describe_histogram(&self, key: KeyName, unit: Option<Unit>, description: SharedString) {
        self.0.describe_histogram(key, unit, description);
    }

    fn register_counter(&self, key: &Key, metadata: &Metadata<'_>) -> Counter {
        self.0.register_counter(&scrub(key), metadata)
    }

    fn register_gauge(&self, key: &Key, metadata: &Metadata<'_>) -> Gauge {
        self.0.register_gauge(&scrub(key), metadata)
    }

    fn register_histogram(&self, key: &Key, metadata: &Metadata<'_>) -> Histogram {
        self.0.register_histogram(&scrub(key), metadata)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voice_of(key: &Key) -> String {
        key.labels()
            .find(|l| l.key() == "voice")
            .map(|l| l.value().to_string())
            .unwrap_or_default()
    }

    #[test]
    fn cloned_voice_ids_become_one_value_and_server_voices_keep_theirs() {
        let cloned = Key::from_parts(
            "sauti_tts_characters_total",
            vec![
                Label::new("voice", "cv_3f9a1c2e7b5d4a60"),
                Label::new("engine", "formant"),
            ],
        );
        let scrubbed = scrub(&cloned);
        assert_eq!(voice_of(&scrubbed), "cloned");
        assert_eq!(scrubbed.name(), "sauti_tts_characters_total");
        assert!(scrubbed
            .labels()
            .any(|l| l.key() == "engine" && l.value() == "formant"));
        for own in ["zuri", "baraka", "mms-swh", "cv_short"] {
            let key = Key::from_parts("sauti_tts_characters_total", vec![Label::new("voice", own)]);
            assert_eq!(voice_of(&scrub(&key)), own);
        }
    }
}
