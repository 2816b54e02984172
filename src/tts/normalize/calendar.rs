//! Dates and clock times: "tarehe kumi na mbili Machi, mwaka …", and Swahili time counted from dawn.

use std::sync::OnceLock;

use regex::{Captures, Regex};

use super::numbers::cardinal;
use super::rules::regex_cached;

const MONTHS: [&str; 12] = [
    "Januari", "Februari", "Machi", "Aprili", "Mei", "Juni", "Julai", "Agosti", "Septemba",
    "Oktoba", "Novemba", "Desemba",
];

/// A month name or abbreviation, Swahili or English, to its number.
fn month_number(name: &str) -> Option<usize> {
    let lower = name.trim_end_matches('.').to_lowercase();
    const STEMS: [&[&str]; 12] = [
        &["januari", "january", "jan"],
        &["februari", "february", "feb"],
        &["machi", "march", "mar"],
        &["aprili", "april", "apr"],
        &["mei", "may"],
        &["juni", "june", "jun"],
        &["julai", "july", "jul"],
        &["agosti", "august", "aug", "ago"],
        &["septemba", "september", "sep", "sept"],
        &["oktoba", "october", "okt", "oct"],
        &["novemba", "november", "nov"],
        &["desemba", "december", "des", "dec"],
    ];
    STEMS
        .iter()
        .position(|names| names.contains(&lower.as_str()))
        .map(|i| i + 1)
}

const MONTH_PATTERN: &str = r"(?i:januari|january|jan|februari|february|feb|machi|march|mar|aprili|april|apr|mei|may|juni|june|jun|julai|july|jul|agosti|august|aug|ago|septemba|september|sept|sep|oktoba|october|okt|oct|novemba|november|nov|desemba|december|des|dec)\.?";

/// "tarehe kumi na mbili Machi, mwaka elfu mbili na ishirini na tano".
fn spoken_date(day: u32, month: usize, year: Option<u64>) -> Option<String> {
    if !(1..=31).contains(&day) || !(1..=12).contains(&month) {
        return None;
    }
    let mut out = format!("tarehe {} {}", cardinal(u64::from(day)), MONTHS[month - 1]);
    if let Some(year) = year {
        out.push_str(&format!(", mwaka {}", cardinal(year)));
    }
    Some(out)
}

/// 12/03/2025, 12.03.2025, 2025-03-12, "12 Machi 2025", "March 12, 2025".
pub(super) fn dates(s: &str) -> String {
    let keep = |c: &Captures, spoken: Option<String>| spoken.unwrap_or_else(|| c[0].to_string());
    let num = |text: &str| text.parse::<u64>().ok();
    // "12/3/25" (two-digit years, as phone messages write them) is in this century.
    let s = re!(r"\b(?:[Tt]arehe\s+)?([0-9]{1,2})/([0-9]{1,2})/([0-9]{2})\b").replace_all(
        s,
        |c: &Captures| {
            let year = num(&c[3]).map(|y| 2000 + y);
            keep(
                c,
                spoken_date(c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0), year),
            )
        },
    );
    let s = re!(r"\b(?:[Tt]arehe\s+)?([0-9]{1,2})[/.]([0-9]{1,2})[/.]([0-9]{4})\b").replace_all(
        &s,
        |c: &Captures| {
            keep(
                c,
                spoken_date(
                    c[1].parse().unwrap_or(0),
                    c[2].parse().unwrap_or(0),
                    num(&c[3]),
                ),
            )
        },
    );
    let s = re!(r"\b(?:[Tt]arehe\s+)?([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})\b").replace_all(
        &s,
        |c: &Captures| {
            keep(
                c,
                spoken_date(
                    c[3].parse().unwrap_or(0),
                    c[2].parse().unwrap_or(0),
                    num(&c[1]),
                ),
            )
        },
    );
    let day_first =
        format!(r"\b(?:[Tt]arehe\s+)?([0-9]{{1,2}})\s+({MONTH_PATTERN})(?:,?\s+([0-9]{{4}}))?\b");
    let s = regex_cached(&DAY_FIRST, &day_first).replace_all(&s, |c: &Captures| {
        let month = month_number(&c[2]).unwrap_or(0);
        keep(
            c,
            spoken_date(
                c[1].parse().unwrap_or(0),
                month,
                c.get(3).and_then(|y| num(y.as_str())),
            ),
        )
    });
    let month_first = format!(r"\b({MONTH_PATTERN})\s+([0-9]{{1,2}}),?\s+([0-9]{{4}})\b");
    let s = regex_cached(&MONTH_FIRST, &month_first).replace_all(&s, |c: &Captures| {
        let month = month_number(&c[1]).unwrap_or(0);
        keep(c, spoken_date(c[2].parse().unwrap_or(0), month, num(&c[3])))
    });
    // "Juni 12" without a year, when the month is capitalised (a name, not a word that looks like one).
    let month_day = format!(r"\b({MONTH_PATTERN})\s+([0-9]{{1,2}})([^0-9:.,/-]|[.,]\D|[.,]?$)");
    regex_cached(&MONTH_DAY, &month_day)
        .replace_all(&s, |c: &Captures| {
            let month = month_number(&c[1]).filter(|_| c[1].starts_with(char::is_uppercase));
            match month.and_then(|m| spoken_date(c[2].parse().unwrap_or(0), m, None)) {
                Some(date) => format!("{date}{}", &c[3]),
                None => c[0].to_string(),
            }
        })
        .into_owned()
}

static DAY_FIRST: OnceLock<Regex> = OnceLock::new();
static MONTH_FIRST: OnceLock<Regex> = OnceLock::new();
static MONTH_DAY: OnceLock<Regex> = OnceLock::new();

/// Clock time in the Swahili system, which counts hours from dawn (07:00 is "saa moja").
pub(super) fn swahili_time(hour: u32, minute: u32) -> String {
    let (spoken_hour, phrase) = match minute {
        0 => (hour, String::new()),
        15 => (hour, " na robo".to_string()),
        30 => (hour, " na nusu".to_string()),
        45 => (hour + 1, " kasoro robo".to_string()),
        m if m < 30 => (hour, format!(" na dakika {}", cardinal(u64::from(m)))),
        m => (
            hour + 1,
            format!(" kasoro dakika {}", cardinal(u64::from(60 - m))),
        ),
    };
    let swahili_hour = match (spoken_hour + 6) % 12 {
        0 => 12,
        h => h,
    };
    format!(
        "saa {}{phrase} {}",
        cardinal(u64::from(swahili_hour)),
        period(hour)
    )
}

/// Hour on the 24-hour clock from a written hour and an optional am/pm marker.
fn hour_24(hour: u32, meridiem: Option<&str>) -> Option<u32> {
    match meridiem.map(|m| m.to_ascii_lowercase()) {
        None => (hour < 24).then_some(hour),
        Some(m) if (1..=12).contains(&hour) => Some(hour % 12 + if m == "p" { 12 } else { 0 }),
        Some(_) => None,
    }
}

/// The part of the day a 24-hour clock hour falls in.
fn period(hour: u32) -> &'static str {
    match hour {
        4..=5 => "alfajiri",
        6..=11 => "asubuhi",
        12..=15 => "mchana",
        16..=18 => "jioni",
        _ => "usiku",
    }
}

/// Whether a 24-hour clock hour can be called by a written part of the day. Strictly, the morning starts at six
/// (before that is alfajiri); loosely, five in the morning is asubuhi too.
fn fits(hour: u32, part: &str, strict: bool) -> bool {
    match part {
        "alfajiri" => (3..=6).contains(&hour),
        "asubuhi" if strict => (6..=11).contains(&hour),
        "asubuhi" => (4..=11).contains(&hour),
        "mchana" => (11..=15).contains(&hour),
        "jioni" => (15..=19).contains(&hour),
        _ => hour >= 19 || hour <= 4,
    }
}

/// A written hour followed by a written part of the day ("10:05 asubuhi", "saa 1:30 usiku"), on the 24-hour
/// clock. An hour is read on the 12-hour clock of that part of the day ("4:30 jioni" is half past four in the
/// afternoon), unless only Swahili time fits it ("saa 2:00 asubuhi" is eight in the morning); after "saa",
/// Swahili time comes first ("saa 1:00 usiku" is seven in the evening).
fn hour_with_part(hour: u32, part: &str, after_saa: bool) -> Option<u32> {
    if hour > 12 {
        return (hour < 24).then_some(hour);
    }
    let part = part.to_lowercase();
    let from_dawn = (hour % 12 + 6) % 24;
    let swahili = [from_dawn, (from_dawn + 12) % 24]
        .into_iter()
        .find(|&h| fits(h, &part, true));
    let twelve = [hour % 12, hour % 12 + 12]
        .into_iter()
        .find(|&h| fits(h, &part, false));
    if after_saa {
        swahili.or(twelve)
    } else {
        twelve.or(swahili)
    }
}

/// 07:00, 7:30pm, 7am, 7 a.m., 19h, 19h30; a preceding "saa" is absorbed, and a following part of the day
/// ("10:05 asubuhi") is said once.
pub(super) fn clock_times(s: &str) -> String {
    let render = |c: &Captures, hour: &str, minute: Option<&str>, meridiem: Option<&str>| {
        let minute: u32 = minute.and_then(|m| m.parse().ok()).unwrap_or(0);
        match hour.parse().ok().and_then(|h| hour_24(h, meridiem)) {
            Some(h) if minute < 60 => swahili_time(h, minute),
            _ => c[0].to_string(),
        }
    };
    let s = re!(r"(?i)\b(?:saa\s+)?([0-9]{1,2})(?:[:.]([0-9]{2}))?\s*(?:([ap])m\b|([ap])\.m\.)")
        .replace_all(s, |c: &Captures| {
            let meridiem = c.get(3).or(c.get(4)).map(|m| m.as_str());
            render(c, &c[1], c.get(2).map(|m| m.as_str()), meridiem)
        });
    let s = re!(
        r"(?i)\b(saa\s+)?([0-9]{1,2}):([0-9]{2})\b(?:\s+(alfajiri|asubuhi|mchana|jioni|usiku)\b)?"
    )
    .replace_all(&s, |c: &Captures| {
        let Some(part) = c.get(4) else {
            return render(c, &c[2], Some(&c[3]), None);
        };
        let minute: u32 = c[3].parse().unwrap_or(60);
        match c[2]
            .parse()
            .ok()
            .and_then(|h| hour_with_part(h, part.as_str(), c.get(1).is_some()))
        {
            Some(h) if minute < 60 => {
                let spoken = swahili_time(h, minute);
                let without = spoken.rsplit_once(' ').map_or(spoken.as_str(), |(t, _)| t);
                format!("{without} {}", part.as_str())
            }
            _ => c[0].to_string(),
        }
    });
    re!(r"(?i)\b(?:saa\s+)?([0-9]{1,2})h([0-9]{2})?\b")
        .replace_all(&s, |c: &Captures| {
            render(c, &c[1], c.get(2).map(|m| m.as_str()), None)
        })
        .into_owned()
}

const DAYS: &str = "Jumatatu|Jumanne|Jumatano|Alhamisi|Ijumaa|Jumamosi|Jumapili";

/// "Jumatatu-Ijumaa" → "Jumatatu hadi Ijumaa"; "Jan-Mar" → "Januari hadi Machi".
pub(super) fn day_and_month_ranges(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let name = format!(r"(?i:{DAYS})|{MONTH_PATTERN}");
    let pattern = format!(r"\b({name})\s?-\s?({name})\b");
    regex_cached(&RE, &pattern)
        .replace_all(s, |c: &Captures| {
            let say = |w: &str| match month_number(w) {
                Some(m) => MONTHS[m - 1].to_string(),
                None => w.to_string(),
            };
            format!("{} hadi {}", say(&c[1]), say(&c[2]))
        })
        .into_owned()
}

/// "tarehe 12-14 Juni 2025" → "tarehe kumi na mbili hadi kumi na nne Juni, mwaka elfu mbili na ishirini na tano".
pub(super) fn date_ranges(s: &str) -> String {
    static RE: OnceLock<Regex> = OnceLock::new();
    let pattern = format!(
        r"\b(?:[Tt]arehe\s+)?([0-9]{{1,2}})\s?(?:-|hadi)\s?([0-9]{{1,2}})\s+({MONTH_PATTERN})(?:,?\s+([0-9]{{4}}))?\b"
    );
    regex_cached(&RE, &pattern)
        .replace_all(s, |c: &Captures| {
            let (from, to): (u32, u32) = (c[1].parse().unwrap_or(0), c[2].parse().unwrap_or(0));
            let month = month_number(&c[3]).unwrap_or(0);
            let year = c.get(4).and_then(|y| y.as_str().parse().ok());
            match spoken_date(to, month, year) {
                Some(end) if (1..=31).contains(&from) && from < to => {
                    let end = end.trim_start_matches("tarehe ");
                    format!("tarehe {} hadi {end}", cardinal(u64::from(from)))
                }
                _ => c[0].to_string(),
            }
        })
        .into_owned()
}
