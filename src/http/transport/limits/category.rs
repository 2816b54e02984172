//! The endpoint categories that have limits of their own (spec §8).

use axum::http::Method;

/// Endpoint categories with their own limits (spec §8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Category {
    /// `POST /v1/text-to-speech/*`, `POST /v1/tts/jobs`.
    Synthesis,
    /// `GET` and `HEAD /v1/tts/jobs/*`.
    Status,
    /// Everything else.
    Default,
}

impl Category {
    /// The category of a request (the path with or without its `/v1` prefix, on its own or under the
    /// ElevenLabs-compatible `/elevenlabs`).
    pub fn of(method: &Method, path: &str) -> Self {
        let path = path.strip_prefix("/elevenlabs").unwrap_or(path);
        let path = path.strip_prefix("/v1").unwrap_or(path);
        let synthesis = method == Method::POST
            && (path.starts_with("/text-to-speech/")
                || path == "/audio/speech"
                || path == "/tts/jobs"
                || path == "/tts/jobs/");
        if synthesis {
            Category::Synthesis
        } else if (method == Method::GET || method == Method::HEAD)
            && path.starts_with("/tts/jobs/")
        {
            Category::Status
        } else {
            Category::Default
        }
    }

    /// [`Category::of`] the request's path, except that a job's audio asked for in another format (encoded on
    /// each download) counts as synthesis, not polling.
    pub fn of_request(method: &Method, uri: &axum::http::Uri) -> Self {
        let category = Self::of(method, uri.path());
        let encodes = uri
            .query()
            .is_some_and(|q| q.split('&').any(|p| p.starts_with("output_format=")));
        match category {
            Category::Status if encodes && uri.path().ends_with("/audio") => Category::Synthesis,
            other => other,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Category::Synthesis => "synthesis",
            Category::Status => "status/polling",
            Category::Default => "default",
        }
    }

    /// Whose limit a 429 names.
    pub(super) fn scope(self) -> &'static str {
        match self {
            Category::Synthesis => "for synthesis",
            Category::Status => "for status/polling",
            Category::Default => "for default",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_shares_the_status_category_with_get() {
        for path in ["/v1/tts/jobs/job_1", "/v1/tts/jobs/job_1/audio"] {
            assert_eq!(Category::of(&Method::GET, path), Category::Status);
            assert_eq!(Category::of(&Method::HEAD, path), Category::Status);
        }
        assert_eq!(
            Category::of(&Method::POST, "/v1/tts/jobs"),
            Category::Synthesis
        );
        assert_eq!(Category::of(&Method::HEAD, "/v1/voices"), Category::Default);
        let uri = axum::http::Uri::from_static;
        assert_eq!(
            Category::of_request(
                &Method::GET,
                &uri("/v1/tts/jobs/job_1/audio?output_format=mp3_44100_128")
            ),
            Category::Synthesis
        );
        assert_eq!(
            Category::of_request(&Method::GET, &uri("/v1/tts/jobs/job_1/audio")),
            Category::Status
        );
        assert_eq!(
            Category::of_request(
                &Method::POST,
                &uri("/elevenlabs/v1/text-to-speech/zuri?output_format=pcm_16000")
            ),
            Category::Synthesis
        );
        assert_eq!(
            Category::of(&Method::DELETE, "/v1/tts/jobs/job_1"),
            Category::Default
        );
    }
}
