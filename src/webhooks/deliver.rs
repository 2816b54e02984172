//! The delivery loop: takes due events from the queue (a few at a time, each under a lease), sends each to its
//! key's destination with its signature, and on an answer outside 2xx (or none within the timeout) tries it again
//! after a pause that doubles each time; a key's webhook whose deliveries failed `webhooks.max_failures` times in
//! a row is disabled. The loop runs beside the calls: a slow receiver delays only its own deliveries.

use std::time::Duration;

use futures_util::StreamExt as _;

use super::{destination, signature, Webhooks};
use crate::storage::webhooks::now_ms;
use crate::storage::EventRow;

/// Deliveries under way at once.
const AT_ONCE: usize = 4;
/// How often the queue is looked at when nothing wakes the loop.
const POLL: Duration = Duration::from_millis(500);

impl Webhooks {
    /// Deliver events as they fall due, for as long as the service runs.
    pub async fn deliver_loop(self) {
        loop {
            let lease = (self.settings.timeout_seconds as i64 + 5) * 1_000;
            let due = match self.store.claim_events(now_ms(), lease, 16).await {
                Ok(due) => due,
                Err(error) => {
                    tracing::warn!(%error, "webhook events could not be read");
                    Vec::new()
                }
            };
            let busy = !due.is_empty();
            futures_util::stream::iter(due)
                .for_each_concurrent(AT_ONCE, |event| {
                    let webhooks = self.clone();
                    async move { webhooks.deliver(event).await }
                })
                .await;
            if !busy {
                let _ = tokio::time::timeout(POLL, self.queued.notified()).await;
            }
        }
    }

    /// Try one event once.
    async fn deliver(&self, event: EventRow) {
        let outcome = self.post(&event).await;
        let store = &self.store;
        let result = match outcome {
            Ok(()) => {
                tracing::info!(event = event.id, kind = event.kind, "webhook delivered");
                metrics::counter!(crate::telemetry::metrics::WEBHOOK_DELIVERIES, "outcome" => "delivered")
                    .increment(1);
                match store.event_delivered(&event.id).await {
                    Ok(()) => store.webhook_delivered(&event.owner).await,
                    Err(error) => Err(error),
                }
            }
            Err(error) => {
                metrics::counter!(crate::telemetry::metrics::WEBHOOK_DELIVERIES, "outcome" => "failed")
                    .increment(1);
                let attempts = event.attempts + 1;
                let pause = self
                    .settings
                    .retry_ms
                    .saturating_mul(1u64 << (attempts.clamp(1, 20) - 1))
                    .min(self.settings.max_retry_ms);
                let max = i64::from(self.settings.max_failures);
                match store
                    .event_retry(&event.id, attempts, now_ms() + pause as i64)
                    .await
                {
                    Ok(()) => match store.webhook_failed(&event.owner, &error, max).await {
                        Ok(row) if !row.enabled => {
                            tracing::warn!(event = event.id, %error, failures = row.failures, "webhook disabled after failing in a row");
                            Ok(())
                        }
                        Ok(_) => {
                            tracing::info!(event = event.id, %error, attempts, "webhook delivery failed; it will be tried again");
                            Ok(())
                        }
                        Err(error) => Err(error),
                    },
                    Err(error) => Err(error),
                }
            }
        };
        if let Err(error) = result {
            tracing::warn!(%error, event = event.id, "a webhook delivery could not be noted");
        }
    }

    /// Send one event to its key's destination; why not, when it was not taken.
    async fn post(&self, event: &EventRow) -> Result<(), String> {
        let row = self
            .store
            .webhook(&event.owner)
            .await
            .map_err(|e| e.to_string())?;
        let target = self
            .destination(row.as_ref())
            .ok_or("the key has no webhook enabled")?;
        let allow = self.settings.allow_private_destinations;
        let (host, addresses) = destination::check(&target.url, allow).await?;
        let timeout = Duration::from_secs(self.settings.timeout_seconds);
        let mut client = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none());
        if host.parse::<std::net::IpAddr>().is_err() {
            client = client.resolve_to_addrs(&host, &addresses);
        }
        crate::dialogue::actions::install_tls();
        let client = client.build().map_err(|e| e.to_string())?;
        let timestamp = crate::storage::unix_now();
        let answer = client
            .post(&target.url)
            .header("content-type", "application/json")
            .header(
                "ElevenLabs-Signature",
                signature(&target.secret, timestamp, &event.body),
            )
            .header("Sauti-Event-Id", &event.id)
            .body(event.body.clone())
            .send()
            .await
            .map_err(|e| format!("the receiver could not be reached: {}", e.without_url()))?;
        match answer.status() {
            status if status.is_success() => Ok(()),
            status => Err(format!("the receiver answered {}", status.as_u16())),
        }
    }
}
