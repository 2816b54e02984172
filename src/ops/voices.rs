//! Voice ownership, checked once for every protocol: a caller may use the server's voices and its own cloned
//! voices. With a store other replicas share, a cloned voice is checked there (one query), so one made on
//! another replica a moment ago is usable here at once and one deleted there is refused here at once.

use super::Service;
use crate::problem::ApiError;

impl Service {
    /// `voice_id` if `owner` may use it, or 404 saying where the caller's voices are listed (`listed_at`, a
    /// path of the caller's protocol).
    pub async fn voice_of(
        &self,
        owner: &str,
        voice_id: &str,
        listed_at: &str,
    ) -> Result<(), ApiError> {
        match self.has_voice(owner, voice_id).await {
            true => Ok(()),
            false => Err(ApiError::not_found(format!(
                "voice_id {voice_id:?} not found; GET {listed_at} lists the voices"
            ))),
        }
    }

    /// Whether `owner` may use the voice `voice_id`. While the shared store does not answer, this replica's
    /// knowledge stands.
    pub async fn has_voice(&self, owner: &str, voice_id: &str) -> bool {
        if !self.db.shared() || !voice_id.starts_with("cv_") {
            return self.voices.get_for(owner, voice_id).is_some();
        }
        match self.db.voice(owner, voice_id).await {
            Ok(Some(record)) => {
                if self.voices.get_for(owner, voice_id).is_none() {
                    if let Err(why) =
                        crate::clone::publish(&record, &self.voices, self.voices.lexicon())
                    {
                        tracing::error!(%why, "cloned voice made on another replica not published");
                    }
                }
            }
            Ok(None) => {
                self.voices.remove_cloned(owner, voice_id);
            }
            Err(error) => tracing::warn!(%error, "a cloned voice could not be looked up"),
        }
        self.voices.get_for(owner, voice_id).is_some()
    }

    /// With a store other replicas share, make this replica's cloned voices of `owner` the store's (one
    /// query), so a list shows what was made or deleted on another replica a moment ago.
    pub async fn refresh_voices_of(&self, owner: &str) {
        if !self.db.shared() {
            return;
        }
        if let Err(error) = crate::clone::take_up(self.db.as_ref(), &self.voices, Some(owner)).await
        {
            tracing::warn!(%error, "cloned voices could not be read");
        }
    }
}
