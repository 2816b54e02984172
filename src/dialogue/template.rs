//! Reply templates: `{slot}`, `{result.NAME}`, the built-ins `{time}` (Swahili reckoning) and `{date}`, and the
//! call's variables, `{{name}}` (a caller's number, a call sid, values the call was started with). A variable whose
//! name starts `secret__` is filled only where an action is called ([`fill_variables`]), never in what the agent
//! says, never in an LLM prompt. A value is put in as text: what it holds is never read as a placeholder.

use std::collections::BTreeMap;

use time::{OffsetDateTime, UtcOffset, Weekday};

/// Placeholders every template may use.
pub const BUILT_INS: [&str; 2] = ["time", "date"];

/// The names of the `{…}` placeholders in a template (the `{{…}}` variables left out).
pub fn placeholders(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        if let Some((_, after)) = variable_at(&rest[open..]) {
            rest = after;
            continue;
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else { break };
        out.push(after[..close].trim());
        rest = &after[close + 1..];
    }
    out
}

/// Prefix of secret variables: they reach actions only.
pub const SECRET_PREFIX: &str = "secret__";

/// The `{{name}}` variables a text names.
pub fn variables(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        match variable_at(&rest[open..]) {
            Some((name, after)) => {
                out.push(name);
                rest = after;
            }
            None => rest = &rest[open + 2..],
        }
    }
    out
}

/// Whether a variable name is one a template may use: letters, digits and `_`, 1 to 64.
pub fn variable_name(name: &str) -> bool {
    (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A `{{name}}` at the start of `text`: the name and what follows it.
fn variable_at(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix("{{")?;
    let close = inner.find("}}")?;
    let name = inner[..close].trim();
    variable_name(name).then(|| (name, &inner[close + 2..]))
}

/// Fill the `{{name}}` variables of `text` with `values` (a missing one is left out), each passed through
/// `encode`; secret ones only when `secrets` is set.
pub fn fill_variables(
    text: &str,
    values: &BTreeMap<String, String>,
    secrets: bool,
    encode: impl Fn(&str) -> String,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("{{") {
        out.push_str(&rest[..open]);
        match variable_at(&rest[open..]) {
            Some((name, after)) => {
                let allowed = secrets || !name.starts_with(SECRET_PREFIX);
                if let Some(value) = values.get(name).filter(|_| allowed) {
                    out.push_str(&encode(value));
                }
                rest = after;
            }
            None => {
                out.push_str("{{");
                rest = &rest[open + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// What a template can be filled from.
#[derive(Debug, Default, Clone)]
pub struct Values<'a> {
    /// Filled slots.
    pub slots: Option<&'a BTreeMap<String, String>>,
    /// The last action's response fields.
    pub result: Option<&'a serde_json::Map<String, serde_json::Value>>,
    /// The call's variables (`{{name}}`; secret ones are never said).
    pub variables: Option<&'a BTreeMap<String, String>>,
}

/// Fill a template; a placeholder with no value is left out (and the spacing around it tidied).
pub fn render(text: &str, values: &Values<'_>, now: OffsetDateTime) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        if let Some((name, after)) = variable_at(&rest[open..]) {
            let said = values
                .variables
                .filter(|_| !name.starts_with(SECRET_PREFIX))
                .and_then(|v| v.get(name));
            out.push_str(said.map_or("", String::as_str));
            rest = after;
            continue;
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        let name = after[..close].trim();
        out.push_str(&value(name, values, now).unwrap_or_default());
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    tidy(&out)
}

fn value(placeholder: &str, values: &Values<'_>, now: OffsetDateTime) -> Option<String> {
    let (name, filter) = split_filter(placeholder);
    let raw = plain_value(name, values, now)?;
    Some(match filter {
        Some("words") => match raw.parse::<u64>() {
            Ok(n) => super::numbers::in_words(n),
            Err(_) => raw,
        },
        Some("digits") => super::numbers::digits_in_words(&raw),
        _ => raw,
    })
}

/// Filters a placeholder may take: `{amount|words}` reads a number in words, `{phone|digits}` reads digits one
/// by one.
pub const FILTERS: [&str; 2] = ["words", "digits"];

/// A placeholder's name and filter: `amount|words` → (`amount`, `words`).
pub fn split_filter(placeholder: &str) -> (&str, Option<&str>) {
    match placeholder.split_once('|') {
        Some((name, filter)) => (name.trim(), Some(filter.trim())),
        None => (placeholder.trim(), None),
    }
}

fn plain_value(name: &str, values: &Values<'_>, now: OffsetDateTime) -> Option<String> {
    match name {
        "time" => Some(swahili_time(now)),
        "date" => Some(swahili_date(now)),
        _ => match name.strip_prefix("result.") {
            Some(field) => values.result?.get(field).map(|v| match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            }),
            None => values.slots?.get(name).cloned(),
        },
    }
}

/// Collapse doubled spaces and spaces before punctuation left by empty placeholders.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        let glue = word.starts_with(['.', ',', '!', '?', ';', ':']);
        if !out.is_empty() && !glue {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

/// East Africa Time, in which Tanzania and Kenya live.
pub fn east_africa_now() -> OffsetDateTime {
    let eat = UtcOffset::from_hms(3, 0, 0).unwrap_or(UtcOffset::UTC);
    OffsetDateTime::now_utc().to_offset(eat)
}

const HOURS: [&str; 12] = [
    "sita",
    "saba",
    "nane",
    "tisa",
    "kumi",
    "kumi na moja",
    "kumi na mbili",
    "moja",
    "mbili",
    "tatu",
    "nne",
    "tano",
];

/// The time in Swahili reckoning: the day's first hour is 7 a.m. (`saa moja asubuhi`), so 10:30 is
/// `saa nne na nusu asubuhi`.
pub fn swahili_time(now: OffsetDateTime) -> String {
    let (hour, minute) = (now.hour() as usize, now.minute());
    // "kasoro robo" names the coming hour.
    let (shown, minutes) = if minute >= 45 {
        (
            (hour + 1) % 24,
            format!(
                " kasoro {}",
                if minute == 45 {
                    "robo".to_string()
                } else {
                    format!("dakika {}", 60 - minute)
                }
            ),
        )
    } else {
        let minutes = match minute {
            0 => " kamili".to_string(),
            15 => " na robo".to_string(),
            30 => " na nusu".to_string(),
            m => format!(" na dakika {m}"),
        };
        (hour, minutes)
    };
    let period = match shown {
        5..=11 => "asubuhi",
        12..=15 => "mchana",
        16..=18 => "jioni",
        _ => "usiku",
    };
    format!("saa {}{minutes} {period}", HOURS[shown % 12])
}

const MONTHS: [&str; 12] = [
    "Januari", "Februari", "Machi", "Aprili", "Mei", "Juni", "Julai", "Agosti", "Septemba",
    "Oktoba", "Novemba", "Desemba",
];

/// The Swahili name of a weekday.
pub fn weekday(day: Weekday) -> &'static str {
    match day {
        Weekday::Monday => "Jumatatu",
        Weekday::Tuesday => "Jumanne",
        Weekday::Wednesday => "Jumatano",
        Weekday::Thursday => "Alhamisi",
        Weekday::Friday => "Ijumaa",
        Weekday::Saturday => "Jumamosi",
        Weekday::Sunday => "Jumapili",
    }
}

/// Today in Swahili: `Jumapili, tarehe 22 Novemba 2026`.
pub fn swahili_date(now: OffsetDateTime) -> String {
    format!(
        "{}, tarehe {} {} {}",
        weekday(now.weekday()),
        now.day(),
        MONTHS[usize::from(u8::from(now.month())) - 1],
        now.year()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    #[test]
    fn swahili_clock() {
        let at = |t: OffsetDateTime| swahili_time(t);
        assert_eq!(
            at(datetime!(2026-11-22 10:30 +3)),
            "saa nne na nusu asubuhi"
        );
        assert_eq!(
            at(datetime!(2026-11-22 07:00 +3)),
            "saa moja kamili asubuhi"
        );
        assert_eq!(
            at(datetime!(2026-11-22 13:15 +3)),
            "saa saba na robo mchana"
        );
        assert_eq!(
            at(datetime!(2026-11-22 18:45 +3)),
            "saa moja kasoro robo usiku"
        );
        assert_eq!(at(datetime!(2026-11-22 00:00 +3)), "saa sita kamili usiku");
        assert_eq!(
            at(datetime!(2026-11-22 16:10 +3)),
            "saa kumi na dakika 10 jioni"
        );
    }

    #[test]
    fn dates_and_templates() {
        let now = datetime!(2026-11-22 10:30 +3);
        assert_eq!(swahili_date(now), "Jumapili, tarehe 22 Novemba 2026");
        let slots = BTreeMap::from([("amount".to_string(), "5000".to_string())]);
        let values = Values {
            slots: Some(&slots),
            result: None,
            variables: None,
        };
        assert_eq!(
            render(
                "Umetuma {amount}. Kumbukumbu: {result.reference}.",
                &values,
                now
            ),
            "Umetuma 5000. Kumbukumbu:."
        );
        assert_eq!(
            placeholders("a {x} b {result.y} {time}"),
            vec!["x", "result.y", "time"]
        );
    }

    #[test]
    fn variables_are_said_except_secret_ones_and_never_read_as_placeholders() {
        let now = datetime!(2026-11-22 10:30 +3);
        let variables = BTreeMap::from([
            ("jina".to_string(), "Asha {amount}".to_string()),
            ("system__caller_id".to_string(), "+255700000001".to_string()),
            ("secret__token".to_string(), "tk-9931".to_string()),
        ]);
        let slots = BTreeMap::from([("amount".to_string(), "5000".to_string())]);
        let values = Values {
            slots: Some(&slots),
            result: None,
            variables: Some(&variables),
        };
        assert_eq!(
            render(
                "Karibu {{jina}}, namba {{ system__caller_id }}{{secret__token}}: {amount}.",
                &values,
                now
            ),
            "Karibu Asha {amount}, namba +255700000001: 5000."
        );
        assert_eq!(
            placeholders("{{jina}} {amount} {{bad name}}"),
            vec!["amount", "{bad name"]
        );
        assert_eq!(
            super::variables("a {{jina}} b {{secret__token}} {x}"),
            vec!["jina", "secret__token"]
        );
        let url = "https://bank.example/c/{{jina}}?t={{secret__token}}";
        let encode = |v: &str| form_urlencoded::byte_serialize(v.as_bytes()).collect::<String>();
        assert_eq!(
            fill_variables(url, &variables, true, encode),
            "https://bank.example/c/Asha+%7Bamount%7D?t=tk-9931"
        );
        assert_eq!(
            fill_variables(url, &variables, false, str::to_string),
            "https://bank.example/c/Asha {amount}?t="
        );
    }
}
