//! Where to cut audio into Whisper's 30 s windows: at pauses the voice-activity detector finds, never inside
//! speech unless one stretch of speech is itself longer than a window.

use crate::audio::{analysis::detect_speech, SpeechSegment, VadConfig};

/// A window's span in seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Span {
    /// Start in seconds.
    pub start: f64,
    /// End in seconds.
    pub end: f64,
}

/// Silence kept around speech at a window's edges, so word onsets and tails are not clipped.
const EDGE_PAD_SECONDS: f64 = 0.2;

/// The windows to decode for `samples` at `rate` Hz, each at most `max_seconds` long. No windows means no speech.
/// Audio that fits one window is decoded whole; longer audio is cut in the middle of pauses and its silent
/// stretches are skipped.
pub fn plan(samples: &[f32], rate: u32, max_seconds: f64) -> Vec<Span> {
    let speech = detect_speech(samples, rate, &VadConfig::default());
    let total = samples.len() as f64 / f64::from(rate.max(1));
    if speech.is_empty() {
        return Vec::new();
    }
    if total <= max_seconds {
        return vec![Span {
            start: 0.0,
            end: total,
        }];
    }
    cut(&speech, total, max_seconds)
}

/// Group speech segments into windows of at most `max_seconds`, cutting between segments.
pub fn cut(speech: &[SpeechSegment], total: f64, max_seconds: f64) -> Vec<Span> {
    let mut windows = Vec::new();
    let mut start: Option<f64> = None;
    let mut end = 0.0;
    for (i, segment) in speech.iter().enumerate() {
        let before = if i == 0 { 0.0 } else { speech[i - 1].end };
        let after = speech.get(i + 1).map_or(total, |next| next.start);
        let lead = (segment.start - EDGE_PAD_SECONDS.min((segment.start - before) / 2.0)).max(0.0);
        let tail = (segment.end + EDGE_PAD_SECONDS.min((after - segment.end) / 2.0)).min(total);
        match start {
            Some(open) if tail - open <= max_seconds => end = tail,
            Some(open) => {
                windows.push(Span { start: open, end });
                start = Some(lead);
                end = tail;
            }
            None => {
                start = Some(lead);
                end = tail;
            }
        }
        // One stretch of speech longer than a window: cut it into full windows.
        while let Some(open) = start {
            if end - open <= max_seconds {
                break;
            }
            windows.push(Span {
                start: open,
                end: open + max_seconds,
            });
            start = Some(open + max_seconds);
        }
    }
    if let Some(open) = start {
        windows.push(Span { start: open, end });
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seg(start: f64, end: f64) -> SpeechSegment {
        SpeechSegment { start, end }
    }

    #[test]
    fn segments_are_grouped_up_to_the_window_length_and_cut_in_pauses() {
        let speech = [
            seg(1.0, 10.0),
            seg(11.0, 25.0),
            seg(27.0, 40.0),
            seg(41.0, 50.0),
        ];
        let windows = cut(&speech, 60.0, 30.0);
        assert_eq!(windows.len(), 2, "{windows:?}");
        assert!((windows[0].start - 0.8).abs() < 1e-9);
        assert!((windows[0].end - 25.2).abs() < 1e-9);
        assert!((windows[1].start - 26.8).abs() < 1e-9);
        assert!((windows[1].end - 50.2).abs() < 1e-9);
        assert!(windows.iter().all(|w| w.end - w.start <= 30.0));
    }

    #[test]
    fn one_long_stretch_of_speech_is_cut_into_full_windows() {
        let windows = cut(&[seg(0.0, 70.0)], 70.0, 30.0);
        let lengths: Vec<f64> = windows.iter().map(|w| w.end - w.start).collect();
        assert_eq!(lengths.len(), 3, "{windows:?}");
        assert!((lengths[0] - 30.0).abs() < 1e-9 && (lengths[1] - 30.0).abs() < 1e-9);
        assert!((windows[2].end - 70.0).abs() < 1e-9);
    }

    #[test]
    fn silence_has_no_windows_and_short_speech_one_whole_window() {
        assert!(plan(&vec![0.0; 16_000 * 40], 16_000, 30.0).is_empty());
        let mut samples = vec![0.0f32; 16_000 * 5];
        for (i, s) in samples.iter_mut().enumerate().skip(16_000).take(16_000) {
            *s = 0.3 * (i as f32 * 0.07).sin() * ((i / 800) % 2) as f32;
        }
        let windows = plan(&samples, 16_000, 30.0);
        assert_eq!(
            windows,
            vec![Span {
                start: 0.0,
                end: 5.0
            }]
        );
    }
}
