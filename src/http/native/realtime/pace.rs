//! Pacing of the caller's audio on a realtime socket: a conversation happens in real time, so a client may send
//! its audio at most a little ahead of the clock (`realtime.max_audio_ahead_seconds`). Past that the socket is
//! read no faster than the audio plays, and what the client sends waits in its own buffers, not the server's
//! memory.

use std::time::{Duration, Instant};

use crate::audio::SAMPLE_RATE;

/// What one session has been sent, against the clock.
#[derive(Debug)]
pub struct Pace {
    started: Instant,
    received: Duration,
    ahead: Duration,
}

impl Pace {
    /// Starting now, letting the client run `ahead` of real time.
    pub fn new(ahead: Duration) -> Self {
        Self {
            started: Instant::now(),
            received: Duration::ZERO,
            ahead,
        }
    }

    /// `samples` more of 16 kHz audio arrived.
    pub fn took(&mut self, samples: usize) {
        self.received += Duration::from_secs_f64(samples as f64 / f64::from(SAMPLE_RATE));
    }

    /// When the socket may be read again, if not at `now`.
    pub fn resume_at(&self, now: Instant) -> Option<Instant> {
        let due = self.started + self.received;
        (due > now + self.ahead).then(|| due - self.ahead)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audio_ahead_of_the_clock_by_more_than_the_margin_waits_until_it_is_not() {
        let mut pace = Pace::new(Duration::from_secs(2));
        let now = Instant::now();
        pace.took(SAMPLE_RATE as usize); // one second: within the margin
        assert_eq!(pace.resume_at(now), None);
        pace.took(2 * SAMPLE_RATE as usize); // three seconds sent at once: one past the margin
        let resume = pace.resume_at(now).expect("paced");
        let wait = resume.saturating_duration_since(now);
        assert!(
            wait > Duration::from_millis(900) && wait <= Duration::from_secs(1),
            "{wait:?}"
        );
        assert_eq!(pace.resume_at(resume), None);
    }
}
