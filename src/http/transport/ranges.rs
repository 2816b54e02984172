//! `Range` and `If-Range` on stored downloads, read as RFC 9110 §13.1.5 and §14 say. Byte ranges only: a
//! range set that is not well-formed, or names another unit, is ignored (the whole file is sent). Ranges that
//! overlap or touch are joined; one range left is answered with it, several (multipart answers are not
//! offered) with the whole file. A set none of whose ranges reaches into the file (`bytes=-0`, a first byte at
//! or past the end) is unsatisfiable. A last byte past the end, however large, means the end. `If-Range` keeps
//! the range only while the client's validator is this file's entity tag (compared strongly); a date never
//! matches, as these downloads send no `Last-Modified`.

use axum::http::{header, HeaderMap};

/// What a download request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requested {
    /// The whole file (200).
    Whole,
    /// First and last byte, inclusive (206).
    Range(u64, u64),
    /// No byte of the file (416).
    Unsatisfiable,
}

/// What `request` asks for of a file of `length` bytes whose entity tag is `etag` (quoted, strong).
pub fn requested(request: &HeaderMap, length: u64, etag: &str) -> Requested {
    let Some(range) = request.get(header::RANGE) else {
        return Requested::Whole;
    };
    let Ok(range) = range.to_str() else {
        return Requested::Whole;
    };
    if let Some(validator) = request.get(header::IF_RANGE) {
        // Strong comparison: a weak tag (`W/"…"`) or a date never equals the strong tag.
        if validator.to_str().ok().map(str::trim) != Some(etag) {
            return Requested::Whole;
        }
    }
    byte_ranges(range, length)
}

/// A `Range` value against a file of `length` bytes.
fn byte_ranges(value: &str, length: u64) -> Requested {
    let Some((unit, set)) = value.split_once('=') else {
        return Requested::Whole;
    };
    if !unit.eq_ignore_ascii_case("bytes") {
        return Requested::Whole;
    }
    let mut asked = false;
    let mut reaching: Vec<(u64, u64)> = Vec::new();
    for spec in set.split(',') {
        let spec = spec.trim_matches([' ', '\t']);
        // Empty list elements are allowed (RFC 9110 §5.6.1).
        if spec.is_empty() {
            continue;
        }
        let Some((first, last)) = spec.split_once('-') else {
            return Requested::Whole;
        };
        asked = true;
        if first.is_empty() {
            // The last `suffix` bytes; a suffix longer than the file is the whole file.
            let Some(suffix) = position(last) else {
                return Requested::Whole;
            };
            if suffix > 0 && length > 0 {
                reaching.push((length.saturating_sub(suffix), length - 1));
            }
            continue;
        }
        let Some(first) = position(first) else {
            return Requested::Whole;
        };
        let last = match last {
            "" => None,
            last => match position(last) {
                Some(last) if last >= first => Some(last),
                // Not digits, or a last byte before the first: the set is invalid and ignored.
                _ => return Requested::Whole,
            },
        };
        if first < length {
            let end = last.map_or(length - 1, |last| last.min(length - 1));
            reaching.push((first, end));
        }
    }
    if !asked {
        return Requested::Whole;
    }
    reaching.sort_unstable();
    let mut joined = reaching.into_iter();
    let Some(mut range) = joined.next() else {
        return Requested::Unsatisfiable;
    };
    for (first, last) in joined {
        if first > range.1.saturating_add(1) {
            // Ranges with a gap between them: answered with the whole file.
            return Requested::Whole;
        }
        range.1 = range.1.max(last);
    }
    Requested::Range(range.0, range.1)
}

/// A byte position: one or more digits; a number too large for 64 bits is taken as the largest (it lies past
/// the end of any file).
fn position(digits: &str) -> Option<u64> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(digits.parse().unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    const TAG: &str = "\"job_1\"";

    fn asked(range: &str, length: u64) -> Requested {
        let mut headers = HeaderMap::new();
        headers.insert(header::RANGE, HeaderValue::from_str(range).unwrap());
        requested(&headers, length, TAG)
    }

    fn asked_if(range: &str, validator: &str) -> Requested {
        let mut headers = HeaderMap::new();
        headers.insert(header::RANGE, HeaderValue::from_str(range).unwrap());
        headers.insert(header::IF_RANGE, HeaderValue::from_str(validator).unwrap());
        requested(&headers, 1000, TAG)
    }

    #[test]
    fn single_ranges_are_read_as_the_standard_says() {
        use Requested::*;
        assert_eq!(asked("bytes=0-99", 1000), Range(0, 99));
        assert_eq!(asked("bytes=900-", 1000), Range(900, 999));
        assert_eq!(asked("bytes=-100", 1000), Range(900, 999));
        assert_eq!(asked("bytes=-5000", 1000), Range(0, 999));
        assert_eq!(asked("bytes=990-2000", 1000), Range(990, 999));
        assert_eq!(asked("BYTES=0-0", 1000), Range(0, 0));
        assert_eq!(asked("bytes=1000-", 1000), Unsatisfiable);
        assert_eq!(asked("bytes=-0", 1000), Unsatisfiable);
        assert_eq!(asked("bytes=0-", 0), Unsatisfiable);
    }

    #[test]
    fn positions_too_large_for_64_bits_mean_past_the_end() {
        use Requested::*;
        let huge = "99999999999999999999999999";
        assert_eq!(asked(&format!("bytes=0-{huge}"), 1000), Range(0, 999));
        assert_eq!(asked(&format!("bytes=10-{huge}"), 1000), Range(10, 999));
        assert_eq!(asked(&format!("bytes=-{huge}"), 1000), Range(0, 999));
        assert_eq!(asked(&format!("bytes={huge}-"), 1000), Unsatisfiable);
    }

    #[test]
    fn several_ranges_are_joined_or_answered_whole() {
        use Requested::*;
        assert_eq!(asked("bytes=0-10,0-10", 1000), Range(0, 10));
        assert_eq!(asked("bytes=0-10, 5-20", 1000), Range(0, 20));
        assert_eq!(asked("bytes=0-4,5-9", 1000), Range(0, 9));
        assert_eq!(asked("bytes=0-1,5-9", 1000), Whole);
        assert_eq!(asked("bytes=0-1,2000-", 1000), Range(0, 1));
        assert_eq!(asked("bytes=-0,0-3", 1000), Range(0, 3));
        assert_eq!(asked("bytes=2000-,-0", 1000), Unsatisfiable);
        assert_eq!(asked("bytes=,0-3,", 1000), Range(0, 3));
    }

    #[test]
    fn malformed_ranges_are_ignored() {
        use Requested::*;
        for range in [
            "lines=1-2",
            "bytes=abc",
            "bytes=5-2",
            "bytes=-",
            "bytes=1-2-3",
            "bytes=+1-2",
            "bytes=",
            "bytes=,",
            "bytes 0-1",
        ] {
            assert_eq!(asked(range, 1000), Whole, "{range}");
        }
    }

    #[test]
    fn if_range_keeps_the_range_only_for_this_file() {
        use Requested::*;
        assert_eq!(asked_if("bytes=0-9", TAG), Range(0, 9));
        assert_eq!(asked_if("bytes=0-9", "\"job_2\""), Whole);
        assert_eq!(asked_if("bytes=0-9", "W/\"job_1\""), Whole);
        assert_eq!(
            asked_if("bytes=0-9", "Fri, 27 Nov 2026 10:00:00 GMT"),
            Whole
        );
        // Without a Range, If-Range changes nothing.
        let mut headers = HeaderMap::new();
        headers.insert(header::IF_RANGE, HeaderValue::from_static("\"other\""));
        assert_eq!(requested(&headers, 1000, TAG), Whole);
    }
}
