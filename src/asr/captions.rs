//! A transcript as captions: SubRip (`.srt`) and WebVTT (`.vtt`), one cue per segment.

use super::Segment;

/// Caption formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Captions {
    /// SubRip: numbered cues, `00:00:01,500` times.
    Srt,
    /// WebVTT: a `WEBVTT` header, `00:00:01.500` times.
    Vtt,
}

impl Captions {
    /// The media type of the document.
    pub fn content_type(self) -> &'static str {
        match self {
            Captions::Srt => "application/x-subrip; charset=utf-8",
            Captions::Vtt => "text/vtt; charset=utf-8",
        }
    }

    /// The captions of `segments`.
    pub fn write(self, segments: &[Segment]) -> String {
        let mut document = String::new();
        if self == Captions::Vtt {
            document.push_str("WEBVTT\n\n");
        }
        let separator = match self {
            Captions::Srt => ',',
            Captions::Vtt => '.',
        };
        for (i, segment) in segments.iter().enumerate() {
            if self == Captions::Srt {
                document.push_str(&format!("{}\n", i + 1));
            }
            // One line of text: no line breaks, and no arrow that would read as a timing line.
            let text = segment
                .text
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace("-->", "->");
            document.push_str(&format!(
                "{} --> {}\n{text}\n\n",
                clock(segment.start, separator),
                clock(segment.end.max(segment.start), separator)
            ));
        }
        document
    }
}

/// `hh:mm:ss,mmm` (or with a full stop) for `seconds`.
fn clock(seconds: f64, separator: char) -> String {
    let millis = (seconds.max(0.0) * 1000.0).round() as u64;
    let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    format!(
        "{hours:02}:{minutes:02}:{:02}{separator}{:03}",
        rest / 1000,
        rest % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segments() -> Vec<Segment> {
        vec![
            Segment {
                start: 0.0,
                end: 1.5,
                text: "habari za asubuhi".into(),
            },
            Segment {
                start: 3725.25,
                end: 3727.0,
                text: "karibu\n-->  tena".into(),
            },
        ]
    }

    #[test]
    fn srt_numbers_its_cues_with_comma_times() {
        assert_eq!(
            Captions::Srt.write(&segments()),
            "1\n00:00:00,000 --> 00:00:01,500\nhabari za asubuhi\n\n\
             2\n01:02:05,250 --> 01:02:07,000\nkaribu -> tena\n\n"
        );
    }

    #[test]
    fn vtt_has_its_header_and_full_stop_times() {
        assert_eq!(
            Captions::Vtt.write(&segments()),
            "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nhabari za asubuhi\n\n\
             01:02:05.250 --> 01:02:07.000\nkaribu -> tena\n\n"
        );
        assert_eq!(Captions::Vtt.write(&[]), "WEBVTT\n\n");
    }
}
