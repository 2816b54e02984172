//! Rate limits shared by every replica through Redis (`limits.redis_url`): one GCRA per key and category, kept in
//! Redis and updated by one server-side script that reads Redis's own clock, so N replicas enforce the configured
//! rate in total and their clocks never matter. When Redis does not answer within `limits.redis_timeout_ms` the
//! caller falls back to the replica's own limiter or refuses, as `limits.redis_unreachable` says, and Redis is
//! left alone for a second, so that during an outage requests fall back at once instead of each waiting.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::Script;

use super::Verdict;

/// GCRA over Redis's clock. KEYS[1]: the key's state (its theoretical arrival time, µs since the epoch).
/// ARGV[1]: µs between requests at the steady rate; ARGV[2]: the burst (requests a minute).
/// Returns {allowed, remaining, tat µs, wait µs}.
const GCRA: &str = r"
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000000 + tonumber(now_parts[2])
local interval = tonumber(ARGV[1])
local tolerance = interval * (tonumber(ARGV[2]) - 1)
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
if now < tat - tolerance then
  return {0, 0, tat, tat - tolerance - now}
end
local next_tat = tat + interval
redis.call('SET', KEYS[1], string.format('%d', next_tat), 'PX', math.ceil((next_tat - now) / 1000) + 1000)
return {1, math.floor((now + tolerance - next_tat) / interval) + 1, next_tat, 0}
";

/// A seat among a key's realtime sessions. KEYS[1]: the key's open sessions (a sorted set, each scored by when
/// its lease ends, ms since the epoch). ARGV: the most a key may hold, the lease (ms), the session. Returns 1 when
/// taken, 0 when the key holds all it may.
const TAKE_SEAT: &str = r"
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
";

/// Extends a seat's lease. KEYS[1], ARGV[1]: the lease (ms), ARGV[2]: the session.
const RENEW_SEAT: &str = r"
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
";

/// How long a seat is held without renewal: a replica that dies gives its seats back within this.
const SEAT_LEASE: Duration = Duration::from_secs(30);

/// The limits of every replica, in one Redis.
pub struct SharedLimits {
    connection: ConnectionManager,
    script: Script,
    prefix: String,
    timeout: Duration,
    /// Whether the last call answered (to log each change once, not every request).
    healthy: AtomicBool,
    /// After a failure Redis is left alone until then (ms after `born`), so that while it is away requests fall
    /// back at once instead of each waiting for the timeout.
    resting_until: AtomicU64,
    born: Instant,
}

/// How long Redis is left alone after it failed to answer.
const REST: Duration = Duration::from_secs(1);

impl SharedLimits {
    /// Limits in the Redis at `url` under keys starting with `prefix`. Connects on first use (in the background
    /// after a failure), so a replica starts while Redis is down.
    pub fn new(url: &str, prefix: &str, timeout: Duration) -> Result<Self, String> {
        let client = redis::Client::open(url).map_err(|e| format!("limits.redis_url: {e}"))?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_max_delay(Duration::from_secs(1));
        let connection = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(|e| format!("limits.redis_url: {e}"))?;
        Ok(Self {
            connection,
            script: Script::new(GCRA),
            prefix: prefix.to_string(),
            timeout,
            healthy: AtomicBool::new(true),
            resting_until: AtomicU64::new(0),
            born: Instant::now(),
        })
    }

    /// Count one request of `key` against `per_minute` in `bucket`; an error when Redis did not answer in time.
    pub async fn count(&self, bucket: &str, key: &str, per_minute: u32) -> Result<Verdict, String> {
        self.awake()?;
        let per_minute = per_minute.max(1);
        let interval = 60_000_000 / u64::from(per_minute);
        let mut connection = self.connection.clone();
        let mut invocation = self.script.prepare_invoke();
        invocation
            .key(format!("{}:ratelimit:{bucket}:{key}", self.prefix))
            .arg(interval)
            .arg(per_minute);
        let answer = tokio::time::timeout(
            self.timeout,
            invocation.invoke_async::<(i64, i64, i64, i64)>(&mut connection),
        )
        .await;
        let (allowed, remaining, tat, wait) = match answer {
            Ok(Ok(answer)) => answer,
            Ok(Err(error)) => return Err(self.failed(error.to_string())),
            Err(_) => {
                return Err(self.failed(format!("no answer within {} ms", self.timeout.as_millis())))
            }
        };
        if !self.healthy.swap(true, Ordering::AcqRel) {
            tracing::info!("the shared rate limits answer again (Redis)");
        }
        let seconds = |micros: i64| micros.max(0) as f64 / 1e6;
        Ok(Verdict {
            remaining: u32::try_from(remaining.max(0)).unwrap_or(0),
            reset: seconds(tat),
            retry_after: (allowed == 0).then(|| Duration::from_micros(wait.max(0) as u64)),
        })
    }

    /// A seat for `owner` among at most `max` sessions across the replicas: `Ok(Some)` while the session holds
    /// it (renewed in the background, given back when dropped), `Ok(None)` when the key holds all it may, an
    /// error when Redis did not answer.
    pub async fn take_seat(
        self: &std::sync::Arc<Self>,
        owner: &str,
        max: usize,
    ) -> Result<Option<SharedSeat>, String> {
        self.awake()?;
        let key = format!("{}:seats:{owner}", self.prefix);
        let session = uuid::Uuid::new_v4().to_string();
        let lease = SEAT_LEASE.as_millis() as u64;
        let mut connection = self.connection.clone();
        let script = Script::new(TAKE_SEAT);
        let mut invocation = script.prepare_invoke();
        invocation.key(&key).arg(max).arg(lease).arg(&session);
        let taken = tokio::time::timeout(
            self.timeout,
            invocation.invoke_async::<i64>(&mut connection),
        )
        .await
        .map_err(|_| self.failed(format!("no answer within {} ms", self.timeout.as_millis())))?
        .map_err(|e| self.failed(e.to_string()))?;
        if taken == 0 {
            return Ok(None);
        }
        let (renew_key, renew_session, limits) =
            (key.clone(), session.clone(), std::sync::Arc::clone(self));
        let renewer = tokio::spawn(async move {
            let script = Script::new(RENEW_SEAT);
            loop {
                tokio::time::sleep(SEAT_LEASE / 3).await;
                let mut connection = limits.connection.clone();
                let mut invocation = script.prepare_invoke();
                invocation.key(&renew_key).arg(lease).arg(&renew_session);
                let renewed = tokio::time::timeout(
                    limits.timeout,
                    invocation.invoke_async::<i64>(&mut connection),
                )
                .await;
                if !matches!(renewed, Ok(Ok(_))) {
                    limits.failed("a realtime seat's lease was not renewed".into());
                }
            }
        });
        Ok(Some(SharedSeat {
            limits: std::sync::Arc::clone(self),
            key,
            session,
            renewer,
        }))
    }

    /// Whether Redis answers a PING in time.
    pub async fn ping(&self) -> Result<(), String> {
        let mut connection = self.connection.clone();
        let answer = tokio::time::timeout(
            self.timeout,
            redis::cmd("PING").query_async::<String>(&mut connection),
        )
        .await;
        match answer {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(error)) => Err(error.to_string()),
            Err(_) => Err(format!("no answer within {} ms", self.timeout.as_millis())),
        }
    }

    fn millis(&self) -> u64 {
        self.born.elapsed().as_millis() as u64
    }

    /// An error, without asking Redis, while it rests after a failure.
    fn awake(&self) -> Result<(), String> {
        if self.millis() < self.resting_until.load(Ordering::Relaxed) {
            metrics::counter!(crate::telemetry::metrics::RATE_LIMIT_STORE_FAILURES).increment(1);
            return Err("Redis failed moments ago; asked again shortly".into());
        }
        Ok(())
    }

    fn failed(&self, why: String) -> String {
        metrics::counter!(crate::telemetry::metrics::RATE_LIMIT_STORE_FAILURES).increment(1);
        self.resting_until
            .store(self.millis() + REST.as_millis() as u64, Ordering::Relaxed);
        if self.healthy.swap(false, Ordering::AcqRel) {
            tracing::warn!(%why, "the shared rate limits (Redis) do not answer");
        }
        why
    }
}

/// A realtime session's seat in Redis: renewed while held, given back when dropped.
pub struct SharedSeat {
    limits: std::sync::Arc<SharedLimits>,
    key: String,
    session: String,
    renewer: tokio::task::JoinHandle<()>,
}

impl Drop for SharedSeat {
    fn drop(&mut self) {
        self.renewer.abort();
        let (limits, key, session) = (
            std::sync::Arc::clone(&self.limits),
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.session),
        );
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // Best effort: a seat not given back ends with its lease.
        runtime.spawn(async move {
            let mut connection = limits.connection.clone();
            let removed = tokio::time::timeout(
                limits.timeout,
                redis::cmd("ZREM")
                    .arg(&key)
                    .arg(&session)
                    .query_async::<i64>(&mut connection),
            )
            .await;
            if !matches!(removed, Ok(Ok(_))) {
                limits.failed("a realtime seat was not given back (its lease ends it)".into());
            }
        });
    }
}
