//! `?output_format=` of the synthesis paths, checked before any work (the encoding itself is an operation:
//! `ops::encode`).

use serde::Deserialize;

use crate::audio::output::OutputFormat;
use crate::http::transport::problem::ApiError;

/// `?output_format=` of the synthesis paths.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct FormatQuery {
    /// The audio format, as ElevenLabs names them (`mp3_44100_128`, `pcm_24000`, `ulaw_8000`,
    /// `opus_48000_64`, `wav_22050`, `flac_24000`, …). Omitted: a 16 kHz WAV.
    #[param(
        example = "mp3_44100_128",
        pattern = "^((wav|pcm)_(8000|16000|22050|24000|32000|44100|48000)|(ulaw|alaw)_8000|mp3_(22050_32|24000_48|44100_(32|64|96|128|192))|opus_48000_(32|64|96|128|192)|flac_(16000|22050|24000|44100))$"
    )]
    pub output_format: Option<String>,
}

impl FormatQuery {
    /// The format asked for (16 kHz WAV when none is), or 422 listing the known ones.
    pub fn format(&self) -> Result<OutputFormat, ApiError> {
        match self.output_format.as_deref() {
            None => Ok(OutputFormat::WAV_16K),
            Some(name) => OutputFormat::named(name).map_err(ApiError::unprocessable),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::audio::output::OutputFormat;

    /// Every `output_format` pattern in the API document admits exactly the formats sauti encodes.
    #[test]
    fn the_documented_pattern_names_exactly_the_formats() {
        let document = serde_json::to_value(crate::http::openapi_document()).unwrap();
        let mut patterns = Vec::new();
        for item in document["paths"].as_object().unwrap().values() {
            for operation in item.as_object().unwrap().values() {
                for parameter in operation["parameters"].as_array().into_iter().flatten() {
                    if parameter["name"] == "output_format" {
                        patterns.push(parameter["schema"]["pattern"].as_str().unwrap().to_string());
                    }
                }
            }
        }
        assert!(patterns.len() >= 3, "{patterns:?}");
        for pattern in patterns {
            let pattern = regex::Regex::new(&pattern).unwrap();
            for format in OutputFormat::all() {
                assert!(pattern.is_match(&format.name()), "{}", format.name());
            }
            for other in ["mp3_48000_320", "wav", "opus_16000_32", "flac_8000", ""] {
                assert!(!pattern.is_match(other), "{other}");
            }
        }
    }
}
