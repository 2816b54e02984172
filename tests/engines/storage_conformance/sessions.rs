//! Agent conversations: private to their key, one turn at a time, a lapsed turn lock freed, idle ones gone,
//! and the caps per key and in all held under concurrent creation.

use std::sync::Arc;
use std::time::Duration;

use sauti::storage::{SessionClaim, SessionLimits, SessionRecord, Storage};

fn record(id: &str, owner: &str, scenario: &str) -> SessionRecord {
    SessionRecord {
        id: id.into(),
        owner: owner.into(),
        scenario: scenario.into(),
        state: format!(r#"{{"slots":{{"akaunti":"{id}"}}}}"#),
    }
}

const LIMITS: SessionLimits = SessionLimits {
    idle: Duration::from_secs(600),
    per_owner: 3,
    capacity: 6,
};
const HOLD: Duration = Duration::from_secs(30);

async fn live(store: &Storage, owner: &str, id: &str) -> bool {
    store
        .session_scenario(owner, id, LIMITS.idle)
        .await
        .unwrap()
        .is_some()
}

async fn claim(store: &Storage, owner: &str, id: &str, token: &str) -> SessionClaim {
    store
        .claim_session(owner, id, LIMITS.idle, token, HOLD)
        .await
        .unwrap()
}

pub async fn sessions(store: &Storage) {
    store
        .insert_session(&record("ses_a", "mteja", "banking"), &LIMITS)
        .await
        .unwrap();
    assert_eq!(
        store
            .session_scenario("mteja", "ses_a", LIMITS.idle)
            .await
            .unwrap()
            .as_deref(),
        Some("banking")
    );
    assert!(!live(store, "mgeni", "ses_a").await, "another key's");
    assert_eq!(
        claim(store, "mgeni", "ses_a", "t0").await,
        SessionClaim::Missing
    );

    // Of concurrent turns, one takes the session; the others find it busy.
    let tries: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(store);
            tokio::spawn(async move { claim(&store, "mteja", "ses_a", &format!("t{i}")).await })
        })
        .collect();
    let mut taken = Vec::new();
    for (i, t) in tries.into_iter().enumerate() {
        match t.await.unwrap() {
            SessionClaim::Taken(found) => taken.push((i, found)),
            SessionClaim::Busy => {}
            SessionClaim::Missing => panic!("{}: a live session went missing", store.engine()),
        }
    }
    assert_eq!(taken.len(), 1, "{}: one turn at a time", store.engine());
    let (winner, found) = taken.remove(0);
    assert_eq!(found, record("ses_a", "mteja", "banking"));
    let token = format!("t{winner}");

    // Only the holder writes it back; what it wrote is what the next turn reads.
    assert!(!store
        .release_session("ses_a", "not-the-holder", Some("{}"))
        .await
        .unwrap());
    let changed = r#"{"slots":{"kiasi":"5000"}}"#;
    assert!(store
        .release_session("ses_a", &token, Some(changed))
        .await
        .unwrap());
    let SessionClaim::Taken(again) = claim(store, "mteja", "ses_a", "t-next").await else {
        panic!("free again");
    };
    assert_eq!(again.state, changed);
    assert!(store
        .release_session("ses_a", "t-next", None)
        .await
        .unwrap());
    let SessionClaim::Taken(unchanged) = claim(store, "mteja", "ses_a", "t-last").await else {
        panic!("free again");
    };
    assert_eq!(unchanged.state, changed, "let go without a change");
    assert!(store
        .release_session("ses_a", "t-last", None)
        .await
        .unwrap());

    // A turn whose process died holds the session no longer once its hold lapses.
    store
        .insert_session(&record("ses_dead", "mteja", "health"), &LIMITS)
        .await
        .unwrap();
    let short = Duration::from_millis(50);
    assert!(matches!(
        store
            .claim_session("mteja", "ses_dead", LIMITS.idle, "dying", short)
            .await
            .unwrap(),
        SessionClaim::Taken(_)
    ));
    assert_eq!(
        claim(store, "mteja", "ses_dead", "waiting").await,
        SessionClaim::Busy
    );
    // Busy until the 50 ms hold lapses (a refused claim changes nothing), then taken.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        match claim(store, "mteja", "ses_dead", "waiting").await {
            SessionClaim::Taken(_) => break,
            SessionClaim::Busy if std::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(10)).await
            }
            other => panic!("the lapsed hold was not taken over: {other:?}"),
        }
    }
    assert!(
        !store
            .release_session("ses_dead", "dying", None)
            .await
            .unwrap(),
        "the dead turn's write is refused"
    );
    assert!(store
        .release_session("ses_dead", "waiting", None)
        .await
        .unwrap());

    // Idle too long: gone. (The sleep is the idleness under test: 30 ms unused, against an idle limit of 20 ms.)
    tokio::time::sleep(Duration::from_millis(30)).await;
    let brief = Duration::from_millis(20);
    assert_eq!(
        store
            .session_scenario("mteja", "ses_a", brief)
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        store
            .claim_session("mteja", "ses_a", brief, "late", HOLD)
            .await
            .unwrap(),
        SessionClaim::Missing
    );

    caps(store).await;
}

/// A key holds `per_owner` sessions (its least recently used goes), the store `capacity` (the least recently
/// used of all goes), and concurrent creations never pass either.
async fn caps(store: &Storage) {
    for i in 1..=4 {
        // Apart in time, so that "least recently used" has one answer (the sleep is the order under test).
        tokio::time::sleep(Duration::from_millis(5)).await;
        store
            .insert_session(
                &record(&format!("ses_m{i}"), "mwingine", "general"),
                &LIMITS,
            )
            .await
            .unwrap();
    }
    assert!(
        !live(store, "mwingine", "ses_m1").await,
        "its own oldest went"
    );
    for i in 2..=4 {
        assert!(live(store, "mwingine", &format!("ses_m{i}")).await);
    }
    assert!(
        live(store, "mteja", "ses_a").await,
        "another key's are left"
    );
    // Now 2 + 3 = 5 of 6; two more from a third key: the least recently used of all (ses_a) goes. (Later than
    // the others by a sleep, as above.)
    tokio::time::sleep(Duration::from_millis(5)).await;
    for id in ["ses_t1", "ses_t2"] {
        store
            .insert_session(&record(id, "tatu", "general"), &LIMITS)
            .await
            .unwrap();
    }
    let alive = [
        live(store, "mteja", "ses_a").await,
        live(store, "mteja", "ses_dead").await,
        live(store, "tatu", "ses_t1").await,
        live(store, "tatu", "ses_t2").await,
    ];
    assert_eq!(
        alive.iter().filter(|x| **x).count(),
        3,
        "{}: {alive:?}",
        store.engine()
    );
    assert!(alive[2] && alive[3], "the new ones are kept");

    let tries: Vec<_> = (0..12)
        .map(|i| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                store
                    .insert_session(&record(&format!("ses_c{i}"), "haraka", "general"), &LIMITS)
                    .await
                    .unwrap()
            })
        })
        .collect();
    for t in tries {
        t.await.unwrap();
    }
    let mut kept = 0;
    for i in 0..12 {
        kept += usize::from(live(store, "haraka", &format!("ses_c{i}")).await);
    }
    assert_eq!(kept, LIMITS.per_owner, "{}", store.engine());
}
