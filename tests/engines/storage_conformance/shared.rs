//! What only a database shared by replicas has to show: two replicas' migrations, leases, fenced completion
//! and one retention sweep at a time.

use super::{common, job, open, runtime};

#[test]
fn postgres_replicas_share_one_schema_and_fence_each_others_jobs() {
    let postgres = common::postgres::Postgres::start();
    let url = postgres.url();
    runtime().block_on(async {
        // Two replicas starting at once migrate once.
        let (a, b) = tokio::join!(
            open(&url, std::path::Path::new("unused")),
            open(&url, std::path::Path::new("unused"))
        );
        let (a, b) = (a.unwrap(), b.unwrap());

        // Both derive key ids under the one secret the first of them made.
        assert_eq!(a.key_secret().await.unwrap(), b.key_secret().await.unwrap());

        // What one replica writes, the other reads.
        let queued = job("mteja", "Karibu benki yetu.");
        assert!(a.insert_job_within(&queued, 5).await.unwrap());
        assert_eq!(b.queued_jobs().await.unwrap(), vec![queued.id.clone()]);
        let version = b.keys_version().await.unwrap();
        a.insert_key("tawi", "sk_sauti_shared").await.unwrap();
        assert_ne!(
            b.keys_version().await.unwrap(),
            version,
            "a key made on A is seen on B"
        );

        // A claims it; B can neither claim it, nor finish it, nor take it back while A's lease runs.
        assert!(a.start_job(&queued.id).await.unwrap().is_some());
        assert_eq!(b.start_job(&queued.id).await.unwrap(), None);
        assert!(
            !b.job_succeeded(&queued.id, 1.0).await.unwrap(),
            "only the lease holder completes"
        );
        assert!(!b.job_failed(&queued.id, "not mine").await.unwrap());
        assert_eq!(
            b.requeue_running().await.unwrap(),
            0,
            "a live lease is left alone"
        );
        assert!(a.job_succeeded(&queued.id, 1.0).await.unwrap());
        assert!(
            !a.job_succeeded(&queued.id, 1.0).await.unwrap(),
            "completes once"
        );

        // A replica that died: its lease lapses and another replica queues the job again.
        let orphan = job("mteja", "Muamala wako umekamilika.");
        assert!(a.insert_job_within(&orphan, 5).await.unwrap());
        assert!(a.start_job(&orphan.id).await.unwrap().is_some());
        expire_leases(&url).await;
        assert_eq!(b.requeue_running().await.unwrap(), 1);
        assert!(
            b.start_job(&orphan.id).await.unwrap().is_some(),
            "B runs it now"
        );
        assert!(
            !a.job_succeeded(&orphan.id, 1.0).await.unwrap(),
            "the old holder is fenced out"
        );
        assert!(b.job_succeeded(&orphan.id, 1.0).await.unwrap());

        // Retention sweeps one replica at a time: while another holds the sweep, a replica deletes nothing.
        let (sweeper, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        sweeper
            .execute("SELECT pg_advisory_lock($1)", &[&0x5a07_de1e_i64])
            .await
            .unwrap();
        assert!(a.delete_expired_jobs(i64::MAX).await.unwrap().is_empty());
        sweeper
            .execute("SELECT pg_advisory_unlock($1)", &[&0x5a07_de1e_i64])
            .await
            .unwrap();
        let mut swept = b.delete_expired_jobs(i64::MAX).await.unwrap();
        swept.sort();
        let mut finished = vec![queued.id.clone(), orphan.id.clone()];
        finished.sort();
        assert_eq!(swept, finished);

        // A job whose replicas died under it twice is failed, not queued a third time; a replica handing its
        // jobs back as it stops is not held against them.
        let poison = job("mteja", "Kazi inayozima seva.");
        assert!(a.insert_job_within(&poison, 5).await.unwrap());
        assert!(a.start_job(&poison.id).await.unwrap().is_some());
        assert_eq!(a.release_jobs().await.unwrap(), 1, "a clean stop");
        assert!(b.start_job(&poison.id).await.unwrap().is_some());
        expire_leases(&url).await;
        assert_eq!(a.requeue_running().await.unwrap(), 1, "run again once");
        assert!(a.start_job(&poison.id).await.unwrap().is_some());
        expire_leases(&url).await;
        assert_eq!(b.requeue_running().await.unwrap(), 0, "not a third time");
        let failed = a.job(&poison.id).await.unwrap().unwrap();
        assert_eq!(failed.status, sauti::storage::JobStatus::Failed);
        assert_eq!(
            failed.error.as_deref(),
            Some("the job stopped the server twice while running; it will not be retried")
        );
        assert!(failed.completed_at.is_some());
        assert!(b.queued_jobs().await.unwrap().is_empty());
    });
}

/// Make every running job's lease lapse, as time would for a replica that stopped renewing it.
async fn expire_leases(url: &str) {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(connection);
    client
        .execute(
            "UPDATE jobs SET lease_until = now() - interval '1 second' WHERE status = 'running'",
            &[],
        )
        .await
        .unwrap();
}
