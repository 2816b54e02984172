//! Job audio, behind one trait with an implementation per engine: files in the data directory (the default,
//! written with `fsync` and a rename) or objects in any S3-compatible store (`storage.blobs_url = "s3://…"`,
//! through the `object_store` crate). Either way a job's audio is written under a temporary name and published
//! whole, so a reader never sees half of it, and it is read back as a stream, never buffered whole.

mod local;
mod s3;

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::stream::BoxStream;
use futures_util::{StreamExt, TryStreamExt};
use object_store::path::Path as ObjectPath;
use object_store::ObjectStore;

use super::StorageError;

pub use local::LocalBlobs;
pub use s3::S3Blobs;

/// The configured store of job audio; cheap to clone.
pub type ArtifactStore = Arc<dyn BlobStore>;

/// Where job audio is kept.
#[async_trait]
pub trait BlobStore: Send + Sync + 'static {
    /// `local` or `s3`, for `/readyz` and logs.
    fn engine(&self) -> &'static str;
    /// Why new work is refused now (a local disk below `storage.min_free_bytes`); an object store has no such
    /// floor.
    fn shortage(&self) -> Option<String>;
    /// Store a job's WAV: written under a temporary name, published under the job's only when complete.
    async fn publish(&self, job_id: &str, wav: Bytes) -> Result<(), StorageError>;
    /// A job's WAV, opened for reading; a missing one is an `Io` error of kind `NotFound`.
    async fn open(&self, job_id: &str) -> Result<Blob, StorageError>;
    /// Remove a job's WAV if present.
    async fn remove(&self, job_id: &str) -> Result<(), StorageError>;
    /// Remove what a crash mid-write left behind; how many.
    async fn remove_orphans(&self) -> Result<usize, StorageError>;
}

/// The store `storage.blobs_url` names: empty for files under `data_dir/jobs`, `s3://bucket[/prefix]` for an
/// S3-compatible store (credentials, region and endpoint from the usual `AWS_*` variables).
pub fn open(settings: &crate::config::StorageSettings) -> Result<ArtifactStore, StorageError> {
    if settings.blobs_url.is_empty() {
        let local = LocalBlobs::open(&settings.data_dir)?.with_min_free(settings.min_free_bytes);
        return Ok(Arc::new(local));
    }
    Ok(Arc::new(S3Blobs::open(&settings.blobs_url)?))
}

/// A stored WAV opened for reading: its length, then its bytes (or a range of them) as a stream.
pub struct Blob {
    length: u64,
    source: Source,
}

enum Source {
    /// A file already opened, so a deletion racing the download cannot cut it short.
    File(std::fs::File),
    Object {
        store: Arc<dyn ObjectStore>,
        path: ObjectPath,
    },
}

/// Bytes read from a file at a time.
const CHUNK: usize = 64 * 1024;

impl Blob {
    pub(super) fn file(file: std::fs::File) -> Result<Self, StorageError> {
        let length = file.metadata()?.len();
        Ok(Self {
            length,
            source: Source::File(file),
        })
    }

    pub(super) fn object(store: Arc<dyn ObjectStore>, path: ObjectPath, length: u64) -> Self {
        Self {
            length,
            source: Source::Object { store, path },
        }
    }

    /// Its length in bytes.
    pub fn len(&self) -> u64 {
        self.length
    }

    /// Whether it holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.length == 0
    }

    /// Bytes `start..end` as a stream.
    pub async fn range(
        self,
        start: u64,
        end: u64,
    ) -> Result<BoxStream<'static, std::io::Result<Bytes>>, StorageError> {
        match self.source {
            Source::File(file) => {
                use tokio::io::{AsyncReadExt, AsyncSeekExt};
                let mut file = tokio::fs::File::from_std(file);
                if start > 0 {
                    file.seek(std::io::SeekFrom::Start(start)).await?;
                }
                let reader =
                    tokio_util::io::ReaderStream::with_capacity(file.take(end - start), CHUNK);
                Ok(reader.boxed())
            }
            Source::Object { store, path } => {
                if start == end {
                    return Ok(futures_util::stream::empty().boxed());
                }
                let options = object_store::GetOptions {
                    range: Some(object_store::GetRange::Bounded(start..end)),
                    ..Default::default()
                };
                let got = store.get_opts(&path, options).await.map_err(s3::failed)?;
                Ok(got
                    .into_stream()
                    .map_err(|e| std::io::Error::other(e.to_string()))
                    .boxed())
            }
        }
    }

    /// All of it in memory (to re-encode it).
    pub async fn bytes(self) -> Result<Vec<u8>, StorageError> {
        let length = self.length;
        let mut stream = self.range(0, length).await?;
        let mut all = Vec::with_capacity(usize::try_from(length).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            all.extend_from_slice(&chunk?);
        }
        Ok(all)
    }
}
