//! Use charged to keys and their monthly limits: a charge that would pass the limit changes nothing, a refund is
//! never refused, concurrent charges of one key never pass its limit together, months and kinds are apart, and
//! the breakdown per day and voice adds up to the totals.

use std::sync::Arc;

use sauti::storage::usage::{Charge, Charged, KeyLimits, UsageKind};
use sauti::storage::Storage;

fn charge(owner: &str, period: &str, kind: UsageKind, voice: &str, amount: f64) -> Charge {
    Charge {
        owner: owner.into(),
        period: period.into(),
        day: format!("{period}-0{}", 1 + (amount.abs() as usize) % 9),
        kind,
        voice_id: voice.into(),
        amount,
    }
}

pub async fn usage(store: &Storage) {
    let id = store
        .insert_key("mteja wa kiwango", "sk_usage_limits_0001")
        .await
        .unwrap()
        .id;
    assert_eq!(store.key_limits(&id).await.unwrap(), KeyLimits::default());
    let limits = KeyLimits {
        characters: Some(100),
        audio_seconds: Some(30.5),
    };
    assert!(store.set_key_limits(&id, &limits).await.unwrap());
    assert!(!store.set_key_limits("key_nobody", &limits).await.unwrap());
    assert_eq!(store.key_limits(&id).await.unwrap(), limits);

    let chars = |amount, voice| charge(&id, "2026-11", UsageKind::Characters, voice, amount);
    let counted = |total| Charged::Counted {
        total,
        limit: Some(100.0),
    };
    assert_eq!(
        store.charge(&chars(60.0, "zuri")).await.unwrap(),
        counted(60.0)
    );
    let over = Charged::OverLimit {
        total: 60.0,
        limit: 100.0,
    };
    assert_eq!(store.charge(&chars(50.0, "zuri")).await.unwrap(), over);
    assert_eq!(
        store.charge(&chars(40.0, "baraka")).await.unwrap(),
        counted(100.0)
    );
    assert!(matches!(
        store.charge(&chars(1.0, "zuri")).await.unwrap(),
        Charged::OverLimit { .. }
    ));
    // A refund is never refused; a limit raised lets the key go on.
    assert_eq!(
        store.charge(&chars(-40.0, "baraka")).await.unwrap(),
        counted(60.0)
    );
    // Another month, and kinds without a limit, are counted apart.
    let october = charge(&id, "2026-10", UsageKind::Characters, "zuri", 90.0);
    assert!(
        matches!(store.charge(&october).await.unwrap(), Charged::Counted { total, .. } if total == 90.0)
    );
    for _ in 0..3 {
        let turn = charge(&id, "2026-11", UsageKind::AgentTurns, "", 1.0);
        assert!(matches!(
            store.charge(&turn).await.unwrap(),
            Charged::Counted { limit: None, .. }
        ));
    }
    let seconds = charge(&id, "2026-11", UsageKind::AudioSeconds, "", 30.0);
    assert!(matches!(
        store.charge(&seconds).await.unwrap(),
        Charged::Counted { .. }
    ));
    let more = charge(&id, "2026-11", UsageKind::AudioSeconds, "", 0.75);
    assert!(matches!(
        store.charge(&more).await.unwrap(),
        Charged::OverLimit { .. }
    ));

    let mut totals = store.usage_totals(&id, "2026-11").await.unwrap();
    totals.sort_by_key(|(kind, _)| kind.as_str());
    assert_eq!(
        totals,
        vec![
            (UsageKind::AgentTurns, 3.0),
            (UsageKind::AudioSeconds, 30.0),
            (UsageKind::Characters, 60.0),
        ]
    );
    // The breakdown adds up to the totals, and a range of days picks its rows.
    let rows = store.usage(&id, "2026-11-01", "2026-11-30").await.unwrap();
    let sum = |kind| {
        rows.iter()
            .filter(|r| r.kind == kind)
            .map(|r| r.amount)
            .sum::<f64>()
    };
    assert_eq!(sum(UsageKind::Characters), 60.0);
    assert_eq!(sum(UsageKind::AgentTurns), 3.0);
    assert!(rows.iter().any(|r| r.voice_id == "baraka"));
    assert!(rows.windows(2).all(|w| w[0].day <= w[1].day));
    assert_eq!(
        store
            .usage(&id, "2026-10-01", "2026-10-31")
            .await
            .unwrap()
            .len(),
        1
    );
    assert!(store
        .usage("key_nobody", "2026-11-01", "2026-11-30")
        .await
        .unwrap()
        .is_empty());

    // Concurrent charges of one key: exactly as many as fit are counted.
    let racer = store
        .insert_key("mbio", "sk_usage_limits_0002")
        .await
        .unwrap()
        .id;
    let cap = KeyLimits {
        characters: Some(100),
        audio_seconds: None,
    };
    store.set_key_limits(&racer, &cap).await.unwrap();
    let tasks: Vec<_> = (0..24)
        .map(|_| {
            let store = Arc::clone(store);
            let one = charge(&racer, "2026-11", UsageKind::Characters, "zuri", 10.0);
            tokio::spawn(async move { store.charge(&one).await.unwrap() })
        })
        .collect();
    let mut counted = 0;
    for task in tasks {
        if let Charged::Counted { .. } = task.await.unwrap() {
            counted += 1;
        }
    }
    assert_eq!(counted, 10);
    assert_eq!(
        store.usage_totals(&racer, "2026-11").await.unwrap(),
        vec![(UsageKind::Characters, 100.0)]
    );
}
