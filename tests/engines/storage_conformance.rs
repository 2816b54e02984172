//! One conformance suite for every storage engine: the same cases run against SQLite (a temporary data
//! directory) and PostgreSQL (a private server, or `SAUTI_TEST_POSTGRES_URL`); in `storage_conformance/`, agent
//! conversations (`sessions.rs`), call records (`calls.rs`), webhooks (`webhooks.rs`), what must hold across
//! restarts and upgrades (`restarts.rs`) and what only a shared database has to show (`shared.rs`).

use crate::common;
#[path = "storage_conformance/calls.rs"]
mod calls;
#[path = "storage_conformance/restarts.rs"]
mod restarts;
#[path = "storage_conformance/sessions.rs"]
mod sessions;
#[path = "storage_conformance/shared.rs"]
mod shared;
#[path = "storage_conformance/usage.rs"]
mod usage;
#[path = "storage_conformance/webhooks.rs"]
mod webhooks;

use std::sync::Arc;

use sauti::storage::{
    ClonedVoiceRecord, DictionaryRecord, JobRecord, JobStatus, Storage, StorageError,
};
use sauti::tts::pronunciation::Rule;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn open(url: &str, data_dir: &std::path::Path) -> Result<Storage, StorageError> {
    sauti::storage::open(&sauti::config::StorageSettings {
        url: url.into(),
        data_dir: data_dir.into(),
        ..Default::default()
    })
    .await
}

fn job(owner: &str, text: &str) -> JobRecord {
    JobRecord::new(owner, text, "zuri", Default::default())
}

fn voice(id: &str, owner: &str) -> ClonedVoiceRecord {
    ClonedVoiceRecord {
        voice_id: id.into(),
        owner: owner.into(),
        name: format!("Sauti ya {id}"),
        profile: "{\"base\":\"zuri\"}".into(),
        created_at: "2026-11-26T06:00:00Z".into(),
        source_sha256: "ab".repeat(32),
        consent: Some("ndiyo, nimekubali".into()),
    }
}

fn dictionary(id: &str, owner: &str, unix: i64) -> DictionaryRecord {
    DictionaryRecord {
        id: id.into(),
        owner: owner.into(),
        name: "Majina ya benki".into(),
        description: Some("Matamshi ya majina".into()),
        version_id: format!("pdv_{id}"),
        rules: vec![
            Rule::alias("M-Pesa", "em pesa"),
            Rule::alias("KCB", "kei si bi"),
        ],
        created_unix: unix,
    }
}

/// Every rule a store must keep, whichever engine it is.
async fn conformance(store: Storage) {
    keys(&store).await;
    jobs(&store).await;
    claims(&store).await;
    voices(&store).await;
    dictionaries(&store).await;
    sessions::sessions(&store).await;
    restarts::key_adoption(&store).await;
    usage::usage(&store).await;
    calls::calls(&store).await;
    webhooks::webhooks(&store).await;
    store.ping().await.expect("the store answers");
}

async fn keys(store: &Storage) {
    assert!(!store.any_key().await.unwrap());
    let before = store.keys_version().await.unwrap();
    let made = store
        .insert_key("tawi la Mombasa", "sk_sauti_first")
        .await
        .unwrap();
    assert!(store.any_key().await.unwrap());
    let second = store
        .insert_key("kituo cha simu", "sk_sauti_second")
        .await
        .unwrap();
    let after_insert = store.keys_version().await.unwrap();
    assert_ne!(
        before,
        after_insert,
        "{}: a new key changes the version",
        store.engine()
    );
    let listed = store.keys().await.unwrap();
    assert_eq!(listed.len(), 2);
    // Keys made within the same second are listed in the order of their (unpredictable) ids.
    assert!(listed
        .iter()
        .any(|k| k.hash == made.hash && k.id == made.id));
    assert_ne!(made.hash, "sk_sauti_first", "only the hash is kept");
    assert!(store.revoke_key(&second.id).await.unwrap());
    assert!(
        !store.revoke_key(&second.id).await.unwrap(),
        "revoked once only"
    );
    assert!(!store.revoke_key("key_none").await.unwrap());
    assert_ne!(
        store.keys_version().await.unwrap(),
        after_insert,
        "a revocation changes the version"
    );
    let revoked = store.keys().await.unwrap();
    let state = |id: &str| {
        revoked
            .iter()
            .find(|k| k.id == id)
            .unwrap()
            .revoked_at
            .is_some()
    };
    assert!(state(&second.id) && !state(&made.id));

    // Ids are derived under the store's secret, made once and kept.
    let secret = store.key_secret().await.unwrap();
    assert_eq!(store.key_secret().await.unwrap(), secret);
    assert_eq!(made.id, sauti::storage::key_id(&secret, &made.hash));
    assert_ne!(made.id, sauti::storage::legacy_key_id(&made.hash));
}

async fn jobs(store: &Storage) {
    // Twelve creations at once against a cap of three: exactly three are kept.
    let tries: Vec<_> = (0..12)
        .map(|i| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                store
                    .insert_job_within(&job("mteja", &format!("Habari {i}")), 3)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut kept = 0;
    for t in tries {
        kept += usize::from(t.await.unwrap());
    }
    assert_eq!(
        kept,
        3,
        "{}: the cap holds under concurrent creation",
        store.engine()
    );
    let queued = store.queued_jobs().await.unwrap();
    assert_eq!(queued.len(), 3);

    let mut other = job("mwingine", "Salio lako ni shilingi elfu tano.");
    other.pronunciation = vec![Rule::alias("TZS", "shilingi za Tanzania")];
    assert!(store.insert_job_within(&other, 3).await.unwrap());
    let read = store.job(&other.id).await.unwrap().expect("kept");
    assert_eq!(read, other, "a job reads back as it was written");
    assert_eq!(store.job("job_missing").await.unwrap(), None);

    // Started once only; progress and success are recorded; a finished job cannot finish again.
    let started = store
        .start_job(&other.id)
        .await
        .unwrap()
        .expect("was queued");
    assert_eq!(started.status, JobStatus::Running);
    assert_eq!(
        store.start_job(&other.id).await.unwrap(),
        None,
        "never runs twice at once"
    );
    store.job_progress(&other.id, 0.5).await.unwrap();
    assert_eq!(store.job(&other.id).await.unwrap().unwrap().progress, 0.5);
    assert!(store.job_succeeded(&other.id, 2.25).await.unwrap());
    assert!(
        !store.job_succeeded(&other.id, 2.25).await.unwrap(),
        "succeeds once"
    );
    assert!(!store.job_failed(&other.id, "late").await.unwrap());
    let done = store.job(&other.id).await.unwrap().unwrap();
    assert_eq!(done.status, JobStatus::Succeeded);
    assert_eq!((done.progress, done.audio_seconds), (1.0, Some(2.25)));
    assert!(done.completed_at.is_some());

    // A failure keeps its reason; a job left running is queued again after a restart.
    let failing = &queued[0];
    store.start_job(failing).await.unwrap().expect("queued");
    assert!(store
        .job_failed(failing, "sauti haikupatikana")
        .await
        .unwrap());
    let failed = store.job(failing).await.unwrap().unwrap();
    assert_eq!(failed.status, JobStatus::Failed);
    assert_eq!(failed.error.as_deref(), Some("sauti haikupatikana"));
    let interrupted = &queued[1];
    store.start_job(interrupted).await.unwrap().expect("queued");
    assert_eq!(store.queued_jobs().await.unwrap(), vec![queued[2].clone()]);

    // Retention removes finished jobs only.
    let removed = store.delete_expired_jobs(i64::MAX).await.unwrap();
    let mut expected = vec![other.id.clone(), failing.clone()];
    let mut removed_sorted = removed.clone();
    removed_sorted.sort();
    expected.sort();
    assert_eq!(removed_sorted, expected);
    assert_eq!(store.job(failing).await.unwrap(), None);
    assert!(store.job(interrupted).await.unwrap().is_some());
}

/// Runners claim the oldest queued job; a claim never takes a job twice, even when many claim at once.
async fn claims(store: &Storage) {
    let mut made = Vec::new();
    for i in 0..8 {
        let queued = job("mdai", &format!("Kumbukumbu {i}"));
        assert!(store.insert_job_within(&queued, 100).await.unwrap());
        made.push(queued.id);
    }
    let first = store.claim_job().await.unwrap().expect("one is queued");
    assert_eq!(first.status, JobStatus::Running);
    assert!(
        store.renew_job(&first.id).await.unwrap(),
        "its runner keeps it"
    );
    let earlier: Vec<String> = store.queued_jobs().await.unwrap();
    assert!(!earlier.contains(&first.id));
    let tries: Vec<_> = (0..10)
        .map(|_| {
            let store = Arc::clone(store);
            tokio::spawn(async move { store.claim_job().await.unwrap().map(|j| j.id) })
        })
        .collect();
    let mut claimed = vec![first.id.clone()];
    for t in tries {
        claimed.extend(t.await.unwrap());
    }
    let mut unique = claimed.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(
        unique.len(),
        claimed.len(),
        "{}: a job claimed twice",
        store.engine()
    );
    for id in &made {
        assert!(claimed.contains(id), "{id} never claimed");
    }
    // At shutdown the running jobs go back to the queue, and are claimed again, oldest first.
    assert!(store.job_succeeded(&made[1], 1.0).await.unwrap());
    assert!(
        !store.renew_job(&made[1]).await.unwrap(),
        "a finished job has no lease to renew"
    );
    let released = store.release_jobs().await.unwrap();
    assert!(released >= 7, "{released}");
    let oldest = store.queued_jobs().await.unwrap()[0].clone();
    assert_eq!(
        store.claim_job().await.unwrap().unwrap().id,
        oldest,
        "oldest first"
    );
    while store.claim_job().await.unwrap().is_some() {}
    for id in &made[2..] {
        assert!(store.job_succeeded(id, 1.0).await.unwrap());
    }
    assert!(store.job_succeeded(&made[0], 1.0).await.unwrap());
    store.delete_expired_jobs(i64::MAX).await.unwrap();
}

async fn voices(store: &Storage) {
    let tries: Vec<_> = (0..8)
        .map(|i| {
            let store = Arc::clone(store);
            tokio::spawn(async move {
                store
                    .insert_voice_within(&voice(&format!("cv_{i}"), "mteja"), 2)
                    .await
                    .unwrap()
            })
        })
        .collect();
    let mut kept = 0;
    for t in tries {
        kept += usize::from(t.await.unwrap());
    }
    assert_eq!(
        kept,
        2,
        "{}: the voice cap holds under concurrency",
        store.engine()
    );
    assert!(store
        .insert_voice_within(&voice("cv_b", "mwingine"), 2)
        .await
        .unwrap());
    let all = store.voices().await.unwrap();
    assert_eq!(all.len(), 3);
    assert!(
        all.contains(&voice("cv_b", "mwingine")),
        "a voice reads back as written"
    );
    assert_eq!(
        store.voices_of("mwingine").await.unwrap(),
        vec![voice("cv_b", "mwingine")]
    );
    let theirs = store.voices_of("mteja").await.unwrap();
    assert_eq!(theirs.len(), 2);
    assert!(theirs.iter().all(|v| v.owner == "mteja"));
    assert_eq!(
        store
            .voice("mteja", &theirs[0].voice_id)
            .await
            .unwrap()
            .as_ref(),
        Some(&theirs[0])
    );
    assert_eq!(
        store.voice("mwingine", &theirs[0].voice_id).await.unwrap(),
        None
    );
    let mine = theirs[0].voice_id.clone();
    assert!(
        !store.delete_voice("mwingine", &mine).await.unwrap(),
        "only the owner deletes"
    );
    assert!(store.delete_voice("mteja", &mine).await.unwrap());
    assert!(!store.delete_voice("mteja", &mine).await.unwrap());
    assert_eq!(store.voices().await.unwrap().len(), 2);
}

async fn dictionaries(store: &Storage) {
    for (i, unix) in [(1, 100), (2, 200), (3, 200)] {
        let record = dictionary(&format!("pd_{i}"), "mteja", unix);
        assert!(store.insert_dictionary_within(&record, 3).await.unwrap());
    }
    assert!(!store
        .insert_dictionary_within(&dictionary("pd_4", "mteja", 300), 3)
        .await
        .unwrap());
    assert!(store
        .insert_dictionary_within(&dictionary("pd_5", "mwingine", 300), 3)
        .await
        .unwrap());
    assert_eq!(
        store.dictionary("mteja", "pd_1").await.unwrap(),
        Some(dictionary("pd_1", "mteja", 100))
    );
    assert_eq!(store.dictionary("mwingine", "pd_1").await.unwrap(), None);
    let page: Vec<String> = store
        .dictionaries("mteja", 0, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(
        page,
        ["pd_3", "pd_2", "pd_1"],
        "newest first, later-made first on a tie"
    );
    let second: Vec<String> = store
        .dictionaries("mteja", 1, 1)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.id)
        .collect();
    assert_eq!(second, ["pd_2"]);
    assert!(!store.delete_dictionary("mwingine", "pd_1").await.unwrap());
    assert!(store.delete_dictionary("mteja", "pd_1").await.unwrap());
    assert_eq!(store.dictionaries("mteja", 0, 10).await.unwrap().len(), 2);
}

#[test]
fn sqlite_keeps_every_rule() {
    let dir = tempfile::tempdir().unwrap();
    runtime().block_on(async {
        let store = open("", dir.path()).await.unwrap();
        assert_eq!(store.engine(), "sqlite");
        conformance(store).await;
        // Opened again, the schema is left as it is.
        let again = open("sqlite://", dir.path()).await.unwrap();
        assert_eq!(
            again.keys().await.unwrap().len(),
            4,
            "the suite's two keys and the two of its usage cases"
        );
    });
}

#[test]
fn postgres_keeps_every_rule() {
    let postgres = common::postgres::Postgres::start();
    runtime().block_on(async {
        let store = open(&postgres.url(), std::path::Path::new("unused"))
            .await
            .unwrap();
        assert_eq!(store.engine(), "postgres");
        conformance(store).await;
    });
}
