//! What a store must keep across restarts and upgrades: a job the process stopped under twice is failed rather
//! than run again, data kept under a key's id of an earlier release is handed to its current id, and a database
//! from a newer sauti is refused.

use sauti::storage::{JobStatus, Storage};

use sauti::storage::{StorageError, SCHEMA_VERSION};

use super::{common, job, open, runtime};

/// Data kept under an earlier id is handed over, the key's record included, in one go.
pub async fn key_adoption(store: &Storage) {
    let listed = store.keys().await.unwrap();
    let made = listed.iter().find(|k| k.revoked_at.is_none()).unwrap();
    let second = listed.iter().find(|k| k.revoked_at.is_some()).unwrap();
    let earlier = sauti::storage::legacy_key_id(&made.hash);
    let old_job = job(&earlier, "Kazi ya zamani.");
    assert!(store.insert_job_within(&old_job, 5).await.unwrap());
    let version = store.keys_version().await.unwrap();
    let moves = vec![
        (earlier.clone(), made.id.clone()),
        ("key_nobody".to_string(), "key_nobody2".to_string()),
    ];
    assert_eq!(store.adopt_key_ids(&moves).await.unwrap(), 1);
    assert_eq!(
        store.job(&old_job.id).await.unwrap().unwrap().owner,
        made.id
    );
    assert_eq!(
        store.keys_version().await.unwrap(),
        version,
        "no key renamed"
    );
    let renamed = vec![(second.id.clone(), "key_0000000000000000".to_string())];
    assert_eq!(store.adopt_key_ids(&renamed).await.unwrap(), 1);
    assert_ne!(store.keys_version().await.unwrap(), version);
    let after = store.keys().await.unwrap();
    assert!(after
        .iter()
        .any(|k| k.id == "key_0000000000000000" && k.hash == second.hash));
}

#[test]
fn sqlite_fails_a_job_the_process_stopped_under_twice() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let store = open("", dir.path()).await.unwrap();
        let poison = job("mteja", "Kazi inayozima seva.");
        let other = job("mteja", "Habari ya jioni.");
        assert!(store.insert_job_within(&poison, 5).await.unwrap());
        assert!(store.insert_job_within(&other, 5).await.unwrap());
        // A clean stop is not held against the job: it is queued again with the start taken back.
        assert!(store.start_job(&poison.id).await.unwrap().is_some());
        assert_eq!(store.release_jobs().await.unwrap(), 1);
        // The process dies under it once: it runs again; twice: it fails with why, and the other job is kept.
        assert!(store.start_job(&poison.id).await.unwrap().is_some());
        assert_eq!(store.requeue_running().await.unwrap(), 1);
        assert!(store.start_job(&poison.id).await.unwrap().is_some());
        assert!(store.start_job(&other.id).await.unwrap().is_some());
        assert_eq!(
            store.requeue_running().await.unwrap(),
            1,
            "only the other one"
        );
        let failed = store.job(&poison.id).await.unwrap().unwrap();
        assert_eq!(failed.status, JobStatus::Failed);
        assert_eq!(
            failed.error.as_deref(),
            Some("the job stopped the server twice while running; it will not be retried")
        );
        assert_eq!(store.queued_jobs().await.unwrap(), vec![other.id.clone()]);
    });
}

#[test]
fn a_database_from_a_newer_sauti_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let postgres = common::postgres::Postgres::start();
    runtime().block_on(async {
        drop(open("", dir.path()).await.unwrap());
        let file = rusqlite::Connection::open(dir.path().join("sauti.db")).unwrap();
        file.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
            .unwrap();
        drop(file);
        let refused = open("", dir.path()).await.err().expect("refused");
        assert!(matches!(refused, StorageError::TooNew { .. }), "{refused}");

        drop(open(&postgres.url(), dir.path()).await.unwrap());
        let (client, connection) = tokio_postgres::connect(&postgres.url(), tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client
            .execute(
                "INSERT INTO sauti_schema (version) VALUES ($1)",
                &[&(SCHEMA_VERSION + 1)],
            )
            .await
            .unwrap();
        let refused = open(&postgres.url(), dir.path())
            .await
            .err()
            .expect("refused");
        assert!(refused.to_string().contains("newer"), "{refused}");
    });
}
