//! The WebSocket upgrade every socket of the API takes: a request that is not one is a problem the client can
//! read (426), never a bare status.

use axum::extract::ws::{rejection::WebSocketUpgradeRejection, WebSocketUpgrade};

use crate::http::transport::problem::ApiError;
use crate::problem::codes::ErrorCode;

/// The upgrade, or 426 `upgrade_required` saying how to open the path.
pub fn upgrade(
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Result<WebSocketUpgrade, ApiError> {
    upgrade.map_err(|e| {
        let detail = format!("this path speaks WebSocket: open it with a WebSocket client ({e})");
        ApiError::new(ErrorCode::UpgradeRequired, detail)
    })
}
