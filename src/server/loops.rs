//! The server's background loops: key sync (the idle rate-limit counters forgotten and the realtime sessions of
//! revoked keys closed), cloned-voice sync and the job listener of a shared store, the delivery of post-call
//! webhooks and the expiry of call records. Each is started again should it panic or end.

use std::sync::Arc;
use std::time::Duration;

use crate::actors::background::Background;
use crate::http::transport::auth::KeyRing;
use crate::http::transport::limits::{RateLimits, FORGET_EVERY};
use crate::storage::Storage;
use crate::tts::catalog::VoiceRegistry;

/// Start the background loops: key sync (with the idle rate-limit counters forgotten and the realtime sessions
/// of revoked keys closed), cloned-voice sync and the job listener of a shared store. Each is started again
/// should it panic or end.
pub(super) fn start_background(
    keys: KeyRing,
    db: Storage,
    limits: Arc<RateLimits>,
    voices: Arc<VoiceRegistry>,
    seats: [Arc<crate::actors::realtime::Seats>; 2],
    jobs: crate::storage::JobsWaker,
    records: crate::records::Records,
) -> Background {
    let mut loops = Background::new();
    let store = db.clone();
    loops.spawn("key-sync", move || {
        key_sync(
            keys.clone(),
            store.clone(),
            Arc::clone(&limits),
            seats.clone(),
        )
    });
    if db.shared() {
        let store = db.clone();
        loops.spawn("voice-sync", move || {
            voice_sync(store.clone(), Arc::clone(&voices))
        });
    }
    if let Some(listener) = db.job_listener(Arc::clone(&jobs)) {
        let mut first = Some(listener);
        loops.spawn("job-listener", move || {
            first
                .take()
                .or_else(|| db.job_listener(Arc::clone(&jobs)))
                .unwrap_or_else(|| Box::pin(std::future::pending()))
        });
    }
    let webhooks = records.webhooks.clone();
    loops.spawn("webhook-delivery", move || webhooks.clone().deliver_loop());
    if records.settings.retention_days > 0 {
        loops.spawn("record-expiry", move || records.clone().expire_loop());
    }
    loops
}

/// Keys created or revoked with `sauti keys` (or on another replica) take effect within one tick: the keys are
/// read again only when they changed since the last read, and in full once a minute regardless.
const KEY_TICK: Duration = Duration::from_secs(1);

async fn key_sync(
    keys: KeyRing,
    db: Storage,
    limits: Arc<RateLimits>,
    seats: [Arc<crate::actors::realtime::Seats>; 2],
) {
    let mut tick = tokio::time::interval(KEY_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut since_forget = Duration::ZERO;
    loop {
        tick.tick().await;
        since_forget += KEY_TICK;
        let reloaded = if since_forget >= FORGET_EVERY {
            limits.forget_idle();
            since_forget = Duration::ZERO;
            keys.refresh(db.as_ref()).await.map(|_| true)
        } else {
            keys.refresh_if_changed(db.as_ref()).await
        };
        match reloaded {
            Ok(true) => {
                tracing::debug!("API keys reloaded");
                // The realtime sessions and speech sockets of a key revoked since are told to close.
                let closed: usize = seats
                    .iter()
                    .map(|seats| seats.close_revoked(|owner| keys.holds(owner)))
                    .sum();
                if closed > 0 {
                    tracing::info!(keys = closed, "realtime sessions of revoked keys closed");
                }
            }
            Ok(false) => {}
            Err(error) => tracing::warn!(%error, "could not reload API keys"),
        }
    }
}

/// With a shared store, cloned voices made or deleted on other replicas are taken up every other second.
async fn voice_sync(db: Storage, voices: Arc<VoiceRegistry>) {
    let mut tick = tokio::time::interval(2 * KEY_TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        match crate::clone::take_up(db.as_ref(), &voices, None).await {
            Ok(0) => {}
            Ok(changed) => tracing::debug!(changed, "cloned voices of other replicas taken up"),
            Err(error) => tracing::warn!(%error, "could not read the cloned voices"),
        }
    }
}
