//! What each key uses, charged in the store every replica shares, and its monthly limits. A synthesis is charged
//! its characters before it is made (the same number its `character-cost` header says) and given them back if it
//! fails; a recognition its seconds of audio once they are decoded. Past a limit the answer is 429
//! `quota_exceeded` with the time the month's count starts again. Agent turns and call seconds are counted and
//! not limited. Months are calendar months in UTC.

use time::OffsetDateTime;

use super::Service;
use crate::problem::codes::ErrorCode;
use crate::problem::ApiError;
use crate::storage::usage::{Charge, Charged, KeyLimits, UsageKind, UsageRow};

/// Where `now` falls: its month (`YYYY-MM`), its day (`YYYY-MM-DD`), and when the next month starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    /// `YYYY-MM`.
    pub month: String,
    /// `YYYY-MM-DD`.
    pub day: String,
    /// The next month's first second, Unix time.
    pub next_reset_unix: i64,
}

impl Period {
    /// The period of `now`.
    pub fn of(now: OffsetDateTime) -> Self {
        let date = now.date();
        let (year, month) = (date.year(), u8::from(date.month()));
        let (next_year, next_month) = match month {
            12 => (year + 1, 1),
            m => (year, m + 1),
        };
        let next = time::Date::from_calendar_date(
            next_year,
            time::Month::try_from(next_month).unwrap_or(time::Month::January),
            1,
        )
        .map(|d| d.midnight().assume_utc().unix_timestamp())
        .unwrap_or(now.unix_timestamp());
        Self {
            month: format!("{year:04}-{month:02}"),
            day: format!("{year:04}-{month:02}-{:02}", date.day()),
            next_reset_unix: next,
        }
    }

    /// The period now.
    pub fn now() -> Self {
        Self::of(OffsetDateTime::now_utc())
    }
}

/// A key's month: what it used of each kind and its limits.
#[derive(Debug, Clone)]
pub struct Month {
    /// The period.
    pub period: Period,
    /// The month's totals.
    pub totals: Vec<(UsageKind, f64)>,
    /// The key's limits.
    pub limits: KeyLimits,
}

impl Month {
    /// The month's total of `kind`.
    pub fn total(&self, kind: UsageKind) -> f64 {
        self.totals
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(0.0, |(_, amount)| *amount)
    }
}

fn unavailable(error: crate::storage::StorageError) -> ApiError {
    ApiError::new(
        ErrorCode::StorageUnavailable,
        format!("use could not be counted: {error}"),
    )
}

impl Service {
    /// Charge `owner` `amount` of `kind` (used with `voice_id`, `""` for none): 429 `quota_exceeded` when it
    /// would pass the key's monthly limit (nothing is charged then), 503 when the store does not answer.
    pub async fn charge(
        &self,
        owner: &str,
        kind: UsageKind,
        voice_id: &str,
        amount: f64,
    ) -> Result<(), ApiError> {
        let period = Period::now();
        let charge = Charge {
            owner: owner.to_string(),
            period: period.month.clone(),
            day: period.day.clone(),
            kind,
            voice_id: voice_id.to_string(),
            amount,
        };
        let charged = match self.db.charge(&charge).await {
            Ok(charged) => charged,
            Err(error) => return self.uncounted(owner, kind, error).await,
        };
        match charged {
            Charged::Counted { .. } => Ok(()),
            Charged::OverLimit { total, limit } => {
                let wait = (period.next_reset_unix - crate::storage::unix_now()).max(1) as u64;
                let reset = OffsetDateTime::from_unix_timestamp(period.next_reset_unix)
                    .map(crate::storage::format_timestamp)
                    .unwrap_or_default();
                let unit = match kind {
                    UsageKind::Characters => "characters",
                    _ => "seconds of audio",
                };
                Err(ApiError::new(
                    ErrorCode::QuotaExceeded,
                    format!(
                        "this key's monthly limit is {limit} {unit} and {total} are used; this request needs \
                         {amount}. The count starts again at {reset} (next_character_count_reset_unix {})",
                        period.next_reset_unix
                    ),
                )
                .retry_after(wait))
            }
        }
    }

    /// A charge the store could not take (a full disk, a database that does not answer): a key with no limit
    /// on `kind` goes on, its use logged as uncounted, since its work needs no room of its own; a limited key is
    /// refused with 503, as its limit cannot be checked.
    async fn uncounted(
        &self,
        owner: &str,
        kind: UsageKind,
        error: crate::storage::StorageError,
    ) -> Result<(), ApiError> {
        match self.db.key_limits(owner).await {
            Ok(limits) if limits.of(kind).is_none() => {
                tracing::warn!(%error, owner, kind = kind.as_str(), "use could not be counted");
                metrics::counter!(crate::telemetry::metrics::USAGE_UNCOUNTED, "kind" => kind.as_str())
                    .increment(1);
                Ok(())
            }
            _ => Err(unavailable(error)),
        }
    }

    /// Give back what a request that failed was charged (a failure to do so is logged: the request has
    /// already failed for its own reason).
    pub async fn refund(&self, owner: &str, kind: UsageKind, voice_id: &str, amount: f64) {
        if let Err(error) = self.charge(owner, kind, voice_id, -amount).await {
            tracing::warn!(error = %error.detail, owner, kind = kind.as_str(), "a failed request's charge was not given back");
        }
    }

    /// Count use no limit applies to (agent turns, call seconds); a store that does not answer is logged.
    pub async fn count(&self, owner: &str, kind: UsageKind, amount: f64) {
        if let Err(error) = self.charge(owner, kind, "", amount).await {
            tracing::warn!(error = %error.detail, owner, kind = kind.as_str(), "use was not counted");
        }
    }

    /// `owner`'s month so far.
    pub async fn month(&self, owner: &str) -> Result<Month, ApiError> {
        let period = Period::now();
        let totals = self
            .db
            .usage_totals(owner, &period.month)
            .await
            .map_err(unavailable)?;
        let limits = self.db.key_limits(owner).await.map_err(unavailable)?;
        Ok(Month {
            period,
            totals,
            limits,
        })
    }

    /// `owner`'s use per day, kind and voice between two days (inclusive).
    pub async fn usage_between(
        &self,
        owner: &str,
        from: &str,
        to: &str,
    ) -> Result<Vec<UsageRow>, ApiError> {
        self.db.usage(owner, from, to).await.map_err(unavailable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_resets_at_the_next_month_s_first_second() {
        let at = |s: &str| {
            OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).unwrap()
        };
        let november = Period::of(at("2026-11-28T03:12:00Z"));
        assert_eq!(november.month, "2026-11");
        assert_eq!(november.day, "2026-11-28");
        assert_eq!(
            november.next_reset_unix,
            at("2026-12-01T00:00:00Z").unix_timestamp()
        );
        let december = Period::of(at("2026-12-31T23:59:59Z"));
        assert_eq!(
            december.next_reset_unix,
            at("2027-01-01T00:00:00Z").unix_timestamp()
        );
    }
}
