//! What the calling key used and may use: `GET /v1/usage` (per day, kind and voice, with totals) and
//! `GET /v1/user/subscription` (also `/elevenlabs/v1/user/subscription`, in ElevenLabs' shape: this month's
//! characters, the limit and when the count starts again).

use std::collections::BTreeMap;

use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};

use crate::http::transport::auth::Caller;
use crate::http::transport::extract::ApiQuery;
use crate::http::transport::problem::ApiError;
use crate::http::AppState;
use crate::ops::quota::Period;
use crate::storage::usage::UsageKind;

/// The most days one usage query may span.
const MAX_DAYS: i64 = 366;

/// Query of the usage report.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UsageQuery {
    /// First day (UTC, `YYYY-MM-DD`); omitted: the first day of this month.
    #[param(example = "2026-11-01", format = Date)]
    pub from: Option<String>,
    /// Last day, inclusive; omitted: today.
    #[param(example = "2026-11-30", format = Date)]
    pub to: Option<String>,
}

/// Use on one day of one kind, with one voice.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct UsageLine {
    /// `YYYY-MM-DD` (UTC).
    #[schema(example = "2026-11-28")]
    day: String,
    /// `characters` (synthesised), `audio_seconds` (recognised), `agent_turns` or `call_seconds` (realtime
    /// sessions and calls).
    #[schema(example = "characters")]
    kind: &'static str,
    /// The voice it was used with; `null` when none.
    #[schema(example = "zuri")]
    voice_id: Option<String>,
    /// How much.
    #[schema(example = 1250.0)]
    amount: f64,
}

/// The usage report.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct UsageReport {
    /// First day.
    from: String,
    /// Last day.
    to: String,
    /// Per day, kind and voice, oldest first.
    usage: Vec<UsageLine>,
    /// Each kind's sum over the days.
    totals: BTreeMap<&'static str, f64>,
}

fn day(field: &str, text: &str) -> Result<time::Date, ApiError> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(text, &format).map_err(|_| {
        ApiError::unprocessable(format!("`{field}` must be a date written YYYY-MM-DD"))
    })
}

/// `GET /v1/usage`.
#[utoipa::path(get, path = "/v1/usage", operation_id = "usage", tag = "usage",
    summary = "What this key used, per day, kind and voice",
    description = "Characters synthesised (the sum of the `character-cost` headers), seconds of audio recognised, \
                   agent turns and seconds of realtime sessions, counted where every replica counts them.",
    params(UsageQuery),
    responses(
        (status = 200, description = "The use", body = UsageReport),
        (status = 400, description = "A malformed query (a parameter given twice)", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 422, description = "A day that is not YYYY-MM-DD, `from` after `to`, or more than 366 days", content_type = "application/problem+json", body = crate::http::openapi::Problem),
        (status = 503, description = "The store does not answer", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn usage(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(query): ApiQuery<UsageQuery>,
) -> Result<Json<UsageReport>, ApiError> {
    let period = Period::now();
    let from = query.from.unwrap_or_else(|| format!("{}-01", period.month));
    let to = query.to.unwrap_or(period.day);
    let (first, last) = (day("from", &from)?, day("to", &to)?);
    if first > last {
        return Err(ApiError::unprocessable("`from` must not be after `to`"));
    }
    if (last - first).whole_days() >= MAX_DAYS {
        return Err(ApiError::unprocessable(format!(
            "one report spans at most {MAX_DAYS} days"
        )));
    }
    let rows = state.usage_between(&caller.key_id, &from, &to).await?;
    let mut totals: BTreeMap<&'static str, f64> =
        UsageKind::ALL.iter().map(|k| (k.as_str(), 0.0)).collect();
    let usage = rows
        .into_iter()
        .map(|row| {
            *totals.entry(row.kind.as_str()).or_default() += row.amount;
            UsageLine {
                day: row.day,
                kind: row.kind.as_str(),
                voice_id: Some(row.voice_id).filter(|v| !v.is_empty()),
                amount: row.amount,
            }
        })
        .collect();
    Ok(Json(UsageReport {
        from,
        to,
        usage,
        totals,
    }))
}

/// This month's use and limits, in ElevenLabs' subscription shape.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Subscription {
    /// Always `sauti`.
    #[schema(example = "sauti")]
    tier: &'static str,
    /// Always `active`.
    #[schema(example = "active")]
    status: &'static str,
    /// Characters synthesised this calendar month (UTC).
    #[schema(example = 1250)]
    character_count: i64,
    /// The key's monthly limit; `null`: none.
    #[schema(example = 100000)]
    character_limit: Option<i64>,
    /// When the count starts again (the next month's first second, UTC), Unix time.
    #[schema(example = 1764547200)]
    next_character_count_reset_unix: i64,
    /// Seconds of audio recognised this month.
    #[schema(example = 42.5)]
    audio_seconds_count: f64,
    /// The key's monthly limit on them; `null`: none.
    audio_seconds_limit: Option<f64>,
    /// Always false: limits are set by the operator (`sauti keys update`).
    can_extend_character_limit: bool,
    /// Always false.
    allowed_to_extend_character_limit: bool,
    /// Cloned voices a key may keep.
    #[schema(example = 20)]
    voice_limit: usize,
    /// Always true.
    can_use_instant_voice_cloning: bool,
    /// Always false.
    can_use_professional_voice_cloning: bool,
    /// Always `monthly_period`.
    #[schema(example = "monthly_period")]
    character_refresh_period: &'static str,
}

async fn subscription_of(state: &AppState, caller: &Caller) -> Result<Subscription, ApiError> {
    let month = state.month(&caller.key_id).await?;
    Ok(Subscription {
        tier: "sauti",
        status: "active",
        character_count: month.total(UsageKind::Characters).round() as i64,
        character_limit: month.limits.characters,
        next_character_count_reset_unix: month.period.next_reset_unix,
        audio_seconds_count: (month.total(UsageKind::AudioSeconds) * 1000.0).round() / 1000.0,
        audio_seconds_limit: month.limits.audio_seconds,
        can_extend_character_limit: false,
        allowed_to_extend_character_limit: false,
        voice_limit: state.settings.clone.max_voices_per_key,
        can_use_instant_voice_cloning: true,
        can_use_professional_voice_cloning: false,
        character_refresh_period: "monthly_period",
    })
}

/// `GET /v1/user/subscription`.
#[utoipa::path(get, path = "/v1/user/subscription", operation_id = "subscription", tag = "usage",
    summary = "This month's characters, the key's limit and when the count starts again",
    responses(
        (status = 200, description = "The month", body = Subscription),
        (status = 503, description = "The store does not answer", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn subscription(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Subscription>, ApiError> {
    Ok(Json(subscription_of(&state, &caller).await?))
}

/// `GET /elevenlabs/v1/user/subscription`.
#[utoipa::path(get, path = "/elevenlabs/v1/user/subscription", operation_id = "elevenlabsSubscription", tag = "elevenlabs",
    summary = "This month's characters and limit (ElevenLabs-compatible)",
    responses(
        (status = 200, description = "The month", body = Subscription),
        (status = 503, description = "The store does not answer", content_type = "application/problem+json", body = crate::http::openapi::Problem),
    ))]
pub async fn elevenlabs_subscription(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<Subscription>, ApiError> {
    Ok(Json(subscription_of(&state, &caller).await?))
}
