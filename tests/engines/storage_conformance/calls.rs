//! Call records: private to their key (another's row with the same id is never replaced), replaced whole as a
//! call goes on, listed newest first and filtered by scenario, outcome, start and words said (with `%` and `_`
//! taken literally), a page at a time below a cursor, deleted, and expired by start time.

use sauti::storage::{CallFilter, CallRow, Storage};

fn row(id: &str, owner: &str, scenario: &str, started: i64, outcome: &str, said: &str) -> CallRow {
    CallRow {
        id: id.into(),
        owner: owner.into(),
        scenario: scenario.into(),
        started_unix: started,
        outcome: outcome.into(),
        search: said.to_lowercase(),
        body: format!(r#"{{"id":"{id}","said":"{said}"}}"#),
    }
}

fn ids(rows: &[CallRow]) -> Vec<&str> {
    rows.iter().map(|r| r.id.as_str()).collect()
}

fn all() -> CallFilter {
    CallFilter {
        limit: 100,
        ..CallFilter::default()
    }
}

pub async fn calls(store: &Storage) {
    let calls = [
        row(
            "conv_a",
            "owner-1",
            "banking",
            1_000,
            "success",
            "Nataka salio",
        ),
        row(
            "conv_b",
            "owner-1",
            "health",
            2_000,
            "unknown",
            "Nina homa 100% kali",
        ),
        row(
            "conv_c",
            "owner-1",
            "banking",
            3_000,
            "failure",
            "niunganishe na mhudumu",
        ),
        row(
            "conv_d",
            "owner-1",
            "banking",
            3_000,
            "success",
            "asante kwaheri",
        ),
        row(
            "conv_z",
            "owner-2",
            "banking",
            4_000,
            "success",
            "salio tena",
        ),
    ];
    for call in &calls {
        store.put_call(call).await.unwrap();
    }
    // The same id under another key changes nothing of the first key's.
    let stolen = row("conv_a", "owner-2", "general", 9_000, "failure", "imeibiwa");
    store.put_call(&stolen).await.unwrap();
    assert_eq!(
        store.call("owner-1", "conv_a").await.unwrap(),
        Some(calls[0].clone())
    );
    assert_eq!(store.call("owner-2", "conv_a").await.unwrap(), None);

    // A call goes on: its row is replaced whole.
    let mut longer = calls[1].clone();
    longer.body = r#"{"id":"conv_b","said":"more"}"#.into();
    longer.outcome = "failure".into();
    store.put_call(&longer).await.unwrap();
    assert_eq!(store.call("owner-1", "conv_b").await.unwrap(), Some(longer));

    let listed = store.calls("owner-1", &all()).await.unwrap();
    assert_eq!(
        ids(&listed),
        ["conv_d", "conv_c", "conv_b", "conv_a"],
        "newest first, ties by id"
    );
    let only = |filter: CallFilter| async move { store.calls("owner-1", &filter).await.unwrap() };
    let banking = only(CallFilter {
        scenario: Some("banking".into()),
        ..all()
    })
    .await;
    assert_eq!(ids(&banking), ["conv_d", "conv_c", "conv_a"]);
    let failed = only(CallFilter {
        outcome: Some("failure".into()),
        ..all()
    })
    .await;
    assert_eq!(ids(&failed), ["conv_c", "conv_b"]);
    let window = only(CallFilter {
        after_unix: Some(2_000),
        before_unix: Some(3_000),
        ..all()
    })
    .await;
    assert_eq!(ids(&window), ["conv_b"]);
    let salio = only(CallFilter {
        search: Some("salio".into()),
        ..all()
    })
    .await;
    assert_eq!(ids(&salio), ["conv_a"]);
    let literal = only(CallFilter {
        search: Some("0% k".into()),
        ..all()
    })
    .await;
    assert_eq!(ids(&literal), ["conv_b"]);
    let wildcard = only(CallFilter {
        search: Some("n_taka".into()),
        ..all()
    })
    .await;
    assert!(wildcard.is_empty(), "_ is a character, not a wildcard");

    // Pages below a cursor.
    let first = only(CallFilter { limit: 2, ..all() }).await;
    assert_eq!(ids(&first), ["conv_d", "conv_c"]);
    let below = Some((first[1].started_unix, first[1].id.clone()));
    let second = only(CallFilter {
        limit: 2,
        below,
        ..all()
    })
    .await;
    assert_eq!(ids(&second), ["conv_b", "conv_a"]);

    assert!(store.delete_call("owner-1", "conv_c").await.unwrap());
    assert!(!store.delete_call("owner-1", "conv_c").await.unwrap());
    assert!(
        !store.delete_call("owner-2", "conv_d").await.unwrap(),
        "another key's"
    );
    let mut expired = store.delete_expired_calls(2_500).await.unwrap();
    expired.sort();
    assert_eq!(expired, ["conv_a", "conv_b"]);
    assert_eq!(
        ids(&store.calls("owner-1", &all()).await.unwrap()),
        ["conv_d"]
    );
    assert_eq!(
        ids(&store.calls("owner-2", &all()).await.unwrap()),
        ["conv_z"]
    );
}
