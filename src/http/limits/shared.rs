//! Rate limits shared by every replica through Redis (`limits.redis_url`): one GCRA per key and category, kept in
//! Redis and updated by one server-side script that reads Redis's own clock, so N replicas enforce the configured
//! rate in total and their clocks never matter. When Redis does not answer within `limits.redis_timeout_ms` the
//! caller falls back to the replica's own limiter or refuses, as `limits.redis_unreachable` says.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

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

/// The limits of every replica, in one Redis.
pub struct SharedLimits {
    connection: ConnectionManager,
    script: Script,
    prefix: String,
    timeout: Duration,
    /// Whether the last call answered (to log each change once, not every request).
    healthy: AtomicBool,
}

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
        })
    }

    /// Count one request of `key` against `per_minute` in `bucket`; an error when Redis did not answer in time.
    pub async fn count(&self, bucket: &str, key: &str, per_minute: u32) -> Result<Verdict, String> {
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

    fn failed(&self, why: String) -> String {
        metrics::counter!(crate::telemetry::metrics::RATE_LIMIT_STORE_FAILURES).increment(1);
        if self.healthy.swap(false, Ordering::AcqRel) {
            tracing::warn!(%why, "the shared rate limits (Redis) do not answer");
        }
        why
    }
}
