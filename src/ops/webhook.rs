//! A key's post-call webhook: where its events go, whether deliveries go out, and how many in a row failed.

use super::Service;
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;
use crate::storage::StorageError;
use crate::webhooks::SetError;

/// A webhook as its key sees it.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct WebhookStatus {
    /// Where events go (none: no webhook).
    pub url: Option<String>,
    /// `key` (set by this key), `operator` (the operator's destination), or `none`.
    #[schema(example = "key")]
    pub source: &'static str,
    /// Whether deliveries go out (false once too many in a row failed, until the webhook is set again).
    pub enabled: bool,
    /// Deliveries that failed in a row.
    pub consecutive_failures: i64,
    /// Why the last delivery failed.
    pub last_error: Option<String>,
    /// The signing secret: only in the answer to setting the webhook.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

fn unavailable(error: StorageError) -> ApiError {
    ApiError::new(
        ErrorCode::StorageUnavailable,
        format!("webhooks cannot be read or kept right now: {error}"),
    )
}

/// The shortest and longest signing secret a key may choose.
pub const SECRET_CHARS: (usize, usize) = (16, 256);

impl Service {
    /// `owner`'s webhook.
    pub async fn webhook_status(&self, owner: &str) -> Result<WebhookStatus, ApiError> {
        let webhooks = &self.records.webhooks;
        let row = webhooks.store.webhook(owner).await.map_err(unavailable)?;
        let own = row.as_ref().filter(|r| !r.url.is_empty());
        let operator = &webhooks.settings.url;
        let (url, source) = match own {
            Some(row) => (Some(row.url.clone()), "key"),
            None if !operator.is_empty() => (Some(operator.clone()), "operator"),
            None => (None, "none"),
        };
        Ok(WebhookStatus {
            url,
            source,
            enabled: source != "none" && row.as_ref().is_none_or(|r| r.enabled),
            consecutive_failures: row.as_ref().map_or(0, |r| r.failures),
            last_error: row.and_then(|r| r.last_error),
            secret: None,
        })
    }

    /// Set `owner`'s webhook (enabled, its failures forgotten); the answer holds the signing secret.
    pub async fn set_webhook(
        &self,
        owner: &str,
        url: &str,
        secret: Option<String>,
    ) -> Result<WebhookStatus, ApiError> {
        if let Some(secret) = &secret {
            let (low, high) = SECRET_CHARS;
            if !(low..=high).contains(&secret.chars().count()) {
                return Err(ApiError::unprocessable(format!(
                    "`secret` must be {low} to {high} characters (omit it and one is made)"
                )));
            }
        }
        let secret = match self.records.webhooks.set(owner, url.trim(), secret).await {
            Ok(secret) => secret,
            Err(SetError::Refused(why)) => return Err(ApiError::unprocessable(why)),
            Err(SetError::Storage(error)) => return Err(unavailable(error)),
        };
        let mut status = self.webhook_status(owner).await?;
        status.secret = Some(secret);
        Ok(status)
    }

    /// Remove `owner`'s webhook and the events waiting for it; 404 when it had none.
    pub async fn delete_webhook(&self, owner: &str) -> Result<(), ApiError> {
        let store = &self.records.webhooks.store;
        match store.delete_webhook(owner).await.map_err(unavailable)? {
            true => Ok(()),
            false => Err(ApiError::not_found("this key has no webhook of its own")),
        }
    }
}
