//! Post-call webhooks and their queue: a key's webhook set, replaced and removed (with its waiting events);
//! failures in a row counted and the webhook disabled at the limit (a row made for a key on the operator's
//! destination); events queued within a bound per key, taken under a lease (not taken again until it lapses,
//! never for a disabled webhook), tried again later, and gone once delivered.

use sauti::storage::webhooks::now_ms;
use sauti::storage::{EventRow, Storage, WebhookRow};

fn hook(owner: &str, url: &str) -> WebhookRow {
    WebhookRow {
        owner: owner.into(),
        url: url.into(),
        secret: "whsec_conformance_secret".into(),
        enabled: true,
        failures: 0,
        last_error: None,
    }
}

fn event(id: &str, owner: &str, due_ms: i64) -> EventRow {
    EventRow {
        id: id.into(),
        owner: owner.into(),
        kind: "post_call_transcription".into(),
        body: format!(r#"{{"event_id":"{id}"}}"#),
        attempts: 0,
        due_ms,
    }
}

fn ids(events: &[EventRow]) -> Vec<&str> {
    events.iter().map(|e| e.id.as_str()).collect()
}

pub async fn webhooks(store: &Storage) {
    assert_eq!(store.webhook("hook-1").await.unwrap(), None);
    store
        .set_webhook(&hook("hook-1", "https://a.example/h"))
        .await
        .unwrap();
    store
        .set_webhook(&hook("hook-1", "https://b.example/h"))
        .await
        .unwrap();
    let kept = store.webhook("hook-1").await.unwrap().unwrap();
    assert_eq!(kept.url, "https://b.example/h");

    // Failures in a row, the webhook disabled at the third; a delivery starts them over.
    let failed = store.webhook_failed("hook-1", "500", 3).await.unwrap();
    assert_eq!((failed.failures, failed.enabled), (1, true));
    store.webhook_delivered("hook-1").await.unwrap();
    for expected in 1..=3 {
        let failed = store
            .webhook_failed("hook-1", "the receiver answered 500", 3)
            .await
            .unwrap();
        assert_eq!(failed.failures, expected);
        assert_eq!(failed.enabled, expected < 3);
    }
    assert_eq!(
        store
            .webhook("hook-1")
            .await
            .unwrap()
            .unwrap()
            .last_error
            .as_deref(),
        Some("the receiver answered 500")
    );
    // A key on the operator's destination gets a row of its own when a delivery fails.
    let operator = store.webhook_failed("hook-2", "timeout", 10).await.unwrap();
    assert_eq!(
        (operator.url.as_str(), operator.failures, operator.enabled),
        ("", 1, true)
    );

    // The queue: at most two per key (the oldest go), taken when due and enabled, under a lease.
    let now = now_ms();
    for id in ["evt_1", "evt_2", "evt_3"] {
        store
            .enqueue_event(&event(id, "hook-2", now - 10), 2)
            .await
            .unwrap();
    }
    store
        .enqueue_event(&event("evt_late", "hook-2", now + 60_000), 10)
        .await
        .unwrap();
    store
        .enqueue_event(&event("evt_off", "hook-1", now - 10), 10)
        .await
        .unwrap();
    let taken = store.claim_events(now, 30_000, 10).await.unwrap();
    assert_eq!(
        ids(&taken),
        ["evt_2", "evt_3"],
        "due, enabled, within the bound"
    );
    assert!(
        store
            .claim_events(now + 1_000, 30_000, 10)
            .await
            .unwrap()
            .is_empty(),
        "leased"
    );
    store.event_retry("evt_2", 1, now + 500).await.unwrap();
    store.event_delivered("evt_3").await.unwrap();
    let again = store.claim_events(now + 1_000, 30_000, 10).await.unwrap();
    assert_eq!(ids(&again), ["evt_2"]);
    assert_eq!(again[0].attempts, 1);
    assert!(again[0].body.contains("evt_2"));

    // Set again, a disabled webhook is enabled and its waiting event is taken; removing it drops its events.
    store
        .set_webhook(&hook("hook-1", "https://c.example/h"))
        .await
        .unwrap();
    let enabled = store.webhook("hook-1").await.unwrap().unwrap();
    assert_eq!((enabled.enabled, enabled.failures), (true, 0));
    let taken = store.claim_events(now + 1_000, 30_000, 10).await.unwrap();
    assert_eq!(ids(&taken), ["evt_off"]);
    store.event_retry("evt_off", 1, now).await.unwrap();
    assert!(store.delete_webhook("hook-1").await.unwrap());
    assert!(!store.delete_webhook("hook-1").await.unwrap());
    assert!(store
        .claim_events(now + 40_000, 30_000, 10)
        .await
        .unwrap()
        .iter()
        .all(|e| e.owner != "hook-1"));
}
