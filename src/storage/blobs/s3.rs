//! Job audio in an S3-compatible object store (AWS S3, MinIO, Cloudflare R2, GCS's S3 interface, …), shared by
//! every replica: each WAV is put under a temporary key and renamed to its own when complete.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::TryStreamExt;
use object_store::aws::AmazonS3Builder;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

use super::{Blob, BlobStore};
use crate::storage::StorageError;

/// A temporary object older than this was left by a writer that died.
const ORPHAN_AGE: Duration = Duration::from_secs(3600);
/// What marks a temporary key.
const TEMPORARY: &str = ".tmp-";

/// A bucket (and key prefix) of an S3-compatible store.
pub struct S3Blobs {
    store: Arc<dyn ObjectStore>,
    /// `prefix/jobs`.
    folder: ObjectPath,
}

/// An object store failure as the service reports it; a missing object is `NotFound`.
pub(super) fn failed(error: object_store::Error) -> StorageError {
    match error {
        object_store::Error::NotFound { path, .. } => StorageError::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no object {path}"),
        )),
        other => StorageError::Blobs(other.to_string()),
    }
}

impl S3Blobs {
    /// The store `url` (`s3://bucket[/prefix]`) names, configured from the `AWS_*` environment variables
    /// (`AWS_ENDPOINT` and `AWS_ALLOW_HTTP` for a store other than AWS's own).
    pub fn open(url: &str) -> Result<Self, StorageError> {
        let parsed = url::Url::parse(url)
            .map_err(|e| StorageError::Blobs(format!("storage.blobs_url {url:?}: {e}")))?;
        if parsed.scheme() != "s3" {
            return Err(StorageError::Blobs(format!(
                "storage.blobs_url {url:?}: only s3:// URLs are supported"
            )));
        }
        let store = AmazonS3Builder::from_env()
            .with_url(url)
            .build()
            .map_err(|e| StorageError::Blobs(format!("storage.blobs_url {url:?}: {e}")))?;
        let prefix = parsed.path().trim_matches('/');
        let folder = match prefix.is_empty() {
            true => ObjectPath::from("jobs"),
            false => ObjectPath::from(format!("{prefix}/jobs")),
        };
        Ok(Self {
            store: Arc::new(store),
            folder,
        })
    }

    fn key(&self, job_id: &str) -> ObjectPath {
        self.folder.clone().join(format!("{job_id}.wav"))
    }
}

#[async_trait]
impl BlobStore for S3Blobs {
    fn engine(&self) -> &'static str {
        "s3"
    }

    fn shortage(&self) -> Option<String> {
        None
    }

    async fn publish(&self, job_id: &str, wav: bytes::Bytes) -> Result<(), StorageError> {
        let temporary = self.folder.clone().join(format!(
            "{job_id}.wav{TEMPORARY}{}",
            uuid::Uuid::new_v4().simple()
        ));
        self.store
            .put(&temporary, PutPayload::from(wav))
            .await
            .map_err(failed)?;
        let published = self.store.rename(&temporary, &self.key(job_id)).await;
        if let Err(error) = published {
            let _ = self.store.delete(&temporary).await;
            return Err(failed(error));
        }
        Ok(())
    }

    async fn open(&self, job_id: &str) -> Result<Blob, StorageError> {
        let key = self.key(job_id);
        let meta = self.store.head(&key).await.map_err(failed)?;
        Ok(Blob::object(Arc::clone(&self.store), key, meta.size))
    }

    async fn remove(&self, job_id: &str) -> Result<(), StorageError> {
        match self.store.delete(&self.key(job_id)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(failed(error)),
        }
    }

    async fn remove_orphans(&self) -> Result<usize, StorageError> {
        let cutoff = chrono::Utc::now() - ORPHAN_AGE;
        let stale: Vec<ObjectPath> = self
            .store
            .list(Some(&self.folder))
            .try_filter(|meta| {
                let orphan =
                    meta.location.as_ref().contains(TEMPORARY) && meta.last_modified < cutoff;
                std::future::ready(orphan)
            })
            .map_ok(|meta| meta.location)
            .try_collect()
            .await
            .map_err(failed)?;
        for key in &stale {
            let _ = self.store.delete(key).await;
        }
        Ok(stale.len())
    }
}
