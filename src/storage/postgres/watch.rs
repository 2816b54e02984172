//! One connection per replica that listens for queued jobs (`LISTEN sauti_jobs`) and wakes the jobs actor at
//! once; when it drops it is made again, and the actor's polling covers the gap. The loop is run (and started
//! again should it end) by the server's background loops.

use std::time::Duration;

use futures_util::StreamExt;
use tokio_postgres::{AsyncMessage, NoTls};

use super::jobs::CHANNEL;
use crate::storage::JobsWaker;

/// How long to wait before listening again after the connection failed.
const RECONNECT_AFTER: Duration = Duration::from_secs(2);

/// Listen for as long as the loop is run.
pub(super) async fn listen_forever(config: tokio_postgres::Config, wake: JobsWaker) {
    loop {
        match listen(&config, &wake).await {
            Ok(()) => tracing::warn!("the job notification connection closed; listening again"),
            Err(error) => {
                tracing::warn!(%error, "listening for queued jobs failed; polling meanwhile")
            }
        }
        tokio::time::sleep(RECONNECT_AFTER).await;
    }
}

async fn listen(
    config: &tokio_postgres::Config,
    wake: &JobsWaker,
) -> Result<(), tokio_postgres::Error> {
    let (client, mut connection) = config.connect(NoTls).await?;
    let wake_on = wake.clone();
    // The connection is driven here, beside the commands, so nothing outlives the loop when it is stopped.
    let driver = async move {
        let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
        while let Some(message) = messages.next().await {
            match message {
                Ok(AsyncMessage::Notification(_)) => wake_on(),
                Ok(_) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    };
    let listening = async {
        client.batch_execute(&format!("LISTEN {CHANNEL}")).await?;
        // Jobs queued before the listening began are found by this first wake.
        wake();
        std::future::pending::<Result<(), tokio_postgres::Error>>().await
    };
    tokio::select! {
        ended = driver => ended,
        failed = listening => failed,
    }
}
