//! `/v1/voice-agent/webhook`: the key's post-call webhook (see docs/agent.md, "Post-call webhooks").

use axum::extract::State;
use axum::Json;
use serde::Deserialize;

use crate::http::transport::auth::Caller;
use crate::http::transport::extract::ApiJson;
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::webhook::WebhookStatus;

/// A webhook to set.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetWebhook {
    /// Where events go: an `http://` or `https://` URL on a public address.
    #[schema(example = "https://crm.example.co.tz/sauti/events")]
    pub url: String,
    /// The signing secret, 16 to 256 characters; omitted: one is made and returned.
    pub secret: Option<String>,
}

/// `GET /v1/voice-agent/webhook`.
#[utoipa::path(get, path = "/v1/voice-agent/webhook", operation_id = "getWebhook", tag = "agent",
    summary = "This key's post-call webhook",
    responses((status = 200, description = "Where events go, whether deliveries go out, and failures in a row", body = WebhookStatus)))]
pub async fn get(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<WebhookStatus>, ApiError> {
    Ok(Json(state.webhook_status(&caller.key_id).await?))
}

/// `PUT /v1/voice-agent/webhook`.
#[utoipa::path(put, path = "/v1/voice-agent/webhook", operation_id = "setWebhook", tag = "agent",
    summary = "Set this key's post-call webhook",
    request_body = SetWebhook,
    responses(
        (status = 200, description = "Set and enabled; the answer holds the signing secret", body = WebhookStatus),
        (status = 400, description = "A malformed body", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "Not an http(s) URL, a host that does not resolve or resolves to a loopback, private or link-local address (unless the operator allows them), or a secret outside 16–256 characters", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn set(
    State(state): State<AppState>,
    caller: Caller,
    ApiJson(body): ApiJson<SetWebhook>,
) -> Result<Json<WebhookStatus>, ApiError> {
    Ok(Json(
        state
            .set_webhook(&caller.key_id, &body.url, body.secret)
            .await?,
    ))
}

/// `DELETE /v1/voice-agent/webhook`.
#[utoipa::path(delete, path = "/v1/voice-agent/webhook", operation_id = "deleteWebhook", tag = "agent",
    summary = "Remove this key's post-call webhook and the events waiting for it",
    responses(
        (status = 204, description = "Removed"),
        (status = 404, description = "This key has no webhook of its own", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn delete(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<axum::http::StatusCode, ApiError> {
    state.delete_webhook(&caller.key_id).await?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}
