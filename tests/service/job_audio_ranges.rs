//! Ranges of a job's audio (GET /v1/tts/jobs/{id}/audio) as RFC 9110 reads them: `If-Range` against the
//! `ETag` sent, overlapping ranges joined, unsatisfiable sets answered 416 with `Content-Range: bytes */len`,
//! and positions too large for 64 bits taken as the end of the file.

use crate::common;

use std::time::Duration;

use common::*;
use serde_json::json;

/// A server with one finished job: the server, the job's audio URL and the whole audio.
fn finished_job() -> (tempfile::TempDir, Server, String, Vec<u8>, String) {
    let dir = temp_dir();
    let server = Server::start(
        dir.path(),
        &[
            ("SAUTI__LIMITS__STATUS_PER_MINUTE", "100000"),
            ("SAUTI__LIMITS__DEFAULT_PER_MINUTE", "100000"),
        ],
    );
    let created = post_json(
        &server.url("/v1/tts/jobs"),
        Some(KEY_A),
        &json!({"text": "Habari ya asubuhi. Karibu benki yetu."}),
    );
    assert_eq!(created.status, 202);
    let id = created.json()["job_id"].as_str().unwrap().to_string();
    let done = wait_for_job(&server, KEY_A, &id, Duration::from_secs(60));
    assert_eq!(done["status"], "succeeded", "{done}");
    let url = server.url(&format!("/v1/tts/jobs/{id}/audio"));
    let whole = get(&url, Some(KEY_A));
    assert_eq!(whole.status, 200);
    let etag = whole.header("etag").expect("an ETag").to_string();
    assert!(
        etag.starts_with('"') && etag.ends_with('"'),
        "a strong tag: {etag}"
    );
    assert_eq!(whole.header("accept-ranges"), Some("bytes"));
    (dir, server, url, whole.body, etag)
}

fn ranged(url: &str, headers: &[(&str, &str)]) -> Reply {
    let mut all = vec![("xi-api-key", KEY_A)];
    all.extend_from_slice(headers);
    call("GET", url, &all, None)
}

#[test]
fn job_audio_ranges_follow_rfc_9110() {
    let (_dir, _server, url, whole, etag) = finished_job();
    let length = whole.len();

    // One range: those bytes, with the tag.
    let part = ranged(&url, &[("Range", "bytes=0-10")]);
    assert_eq!(part.status, 206);
    assert_eq!(
        part.header("content-range"),
        Some(format!("bytes 0-10/{length}").as_str())
    );
    assert_eq!(part.body, whole[..11]);
    assert_eq!(part.header("etag"), Some(etag.as_str()));

    // The same range twice, or overlapping ranges: one range, never 416.
    for (range, first, last) in [
        ("bytes=0-10,0-10", 0, 10),
        ("bytes=0-10, 5-20", 0, 20),
        ("bytes=-0,4-7", 4, 7),
    ] {
        let part = ranged(&url, &[("Range", range)]);
        assert_eq!(part.status, 206, "{range}");
        assert_eq!(
            part.header("content-range"),
            Some(format!("bytes {first}-{last}/{length}").as_str()),
            "{range}"
        );
        assert_eq!(part.body, whole[first..=last], "{range}");
    }
    // Ranges apart: the whole file.
    let apart = ranged(&url, &[("Range", "bytes=0-1,20-29")]);
    assert_eq!(apart.status, 200);
    assert_eq!(apart.body, whole);

    // A last byte too large for 64 bits is the end of the file.
    let huge = "99999999999999999999999999";
    let tail = ranged(&url, &[("Range", &format!("bytes=10-{huge}"))]);
    assert_eq!(tail.status, 206);
    assert_eq!(
        tail.header("content-range"),
        Some(format!("bytes 10-{}/{length}", length - 1).as_str())
    );
    assert_eq!(tail.body, whole[10..]);

    // Nothing of the file asked for: 416 with the file's length.
    for range in [
        "bytes=-0".to_string(),
        format!("bytes={huge}-"),
        format!("bytes={length}-"),
    ] {
        let refused = ranged(&url, &[("Range", &range)]);
        assert_eq!(refused.status, 416, "{range}");
        assert_eq!(
            refused.header("content-range"),
            Some(format!("bytes */{length}").as_str()),
            "{range}"
        );
        problem_body(&refused, 416);
    }

    // A malformed range set is ignored.
    let ignored = ranged(&url, &[("Range", "bytes=9-2")]);
    assert_eq!(ignored.status, 200);
    assert_eq!(ignored.body, whole);
}

#[test]
fn if_range_resumes_only_the_same_file() {
    let (_dir, _server, url, whole, etag) = finished_job();
    let resumed = ranged(&url, &[("Range", "bytes=20-"), ("If-Range", &etag)]);
    assert_eq!(resumed.status, 206);
    assert_eq!(resumed.body, whole[20..]);
    // Another tag, the same tag weak, or a date: the whole file, as it is now.
    let weak = format!("W/{etag}");
    for validator in [
        "\"job_00000000000000000000000000000000\"",
        weak.as_str(),
        "Fri, 27 Nov 2026 10:00:00 GMT",
    ] {
        let fresh = ranged(&url, &[("Range", "bytes=20-"), ("If-Range", validator)]);
        assert_eq!(fresh.status, 200, "{validator}");
        assert_eq!(fresh.header("content-range"), None, "{validator}");
        assert_eq!(fresh.body, whole, "{validator}");
    }
}
