//! `sauti keys usage`: what each key used this month, against its limits.

use sauti::ops::quota::Period;
use sauti::storage::usage::UsageKind;
use sauti::storage::Store;

/// Print this month's use of every key (or of `only`), one line each.
pub async fn print(db: &dyn Store, only: Option<&str>) -> anyhow::Result<()> {
    let period = Period::now();
    let keys = db.keys().await?;
    if let Some(id) = only {
        if !keys.iter().any(|k| k.id == id) {
            anyhow::bail!("no key with id {id}");
        }
    }
    println!("key\tname\tmonth\tcharacters\taudio seconds\tagent turns\tcall seconds\tresets");
    for key in keys.iter().filter(|k| only.is_none_or(|id| k.id == id)) {
        let totals = db.usage_totals(&key.id, &period.month).await?;
        let limits = db.key_limits(&key.id).await?;
        let used = |kind: UsageKind| {
            totals
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(0.0, |(_, amount)| *amount)
        };
        let of = |used: f64, limit: Option<f64>| match limit {
            Some(limit) => format!("{used} / {limit}"),
            None => format!("{used} (no limit)"),
        };
        println!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{:.1}\t{}",
            key.id,
            key.name,
            period.month,
            of(
                used(UsageKind::Characters),
                limits.of(UsageKind::Characters)
            ),
            of(
                (used(UsageKind::AudioSeconds) * 10.0).round() / 10.0,
                limits.of(UsageKind::AudioSeconds)
            ),
            used(UsageKind::AgentTurns),
            used(UsageKind::CallSeconds),
            period.next_reset_unix
        );
    }
    Ok(())
}
