//! Cloned voices: the speaker profile each was built from, its owner and its provenance. The SQL lies in
//! [`super::sqlite`] and [`super::postgres`].

/// One stored cloned voice.
#[derive(Debug, Clone, PartialEq)]
pub struct ClonedVoiceRecord {
    /// `cv_…`.
    pub voice_id: String,
    /// Id of the key that made it (only that key sees it).
    pub owner: String,
    /// Display name (at most 100 characters).
    pub name: String,
    /// The speaker profile, JSON.
    pub profile: String,
    /// RFC 3339 UTC.
    pub created_at: String,
    /// SHA-256 of the uploaded reference file, hex.
    pub source_sha256: String,
    /// The `consent` form field as given, if any (provenance).
    pub consent: Option<String>,
}
