//! The LoCoMo conversation files: their sessions' turns and dates, and the
//! questions evaluated with their evidence.

use std::collections::HashSet;
use std::path::Path;

use anyhow::Context as _;
use engram_client::proto;
use engram_tests::scope;

/// Categories with answers in the conversation (5 is adversarial).
const EVALUATED_CATEGORIES: [u64; 4] = [1, 2, 3, 4];

pub struct Turn {
    pub dia_id: String,
    pub content: String,
    pub session: u32,
    pub date: String,
    /// When its session took place, if its date parses.
    pub occurred_at: Option<prost_types::Timestamp>,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// When a LoCoMo session took place, from its date such as "1:56 pm on 8
/// May, 2023" (a wall-clock time without a zone, read as UTC); `None` when
/// it does not parse.
fn session_time(date: &str) -> Option<prost_types::Timestamp> {
    let (clock, day) = date.trim().split_once(" on ")?;
    let (hour_minute, meridiem) = clock.split_once(' ')?;
    let (hour, minute) = hour_minute.split_once(':')?;
    let (hour, minute): (i64, i64) = (hour.parse().ok()?, minute.parse().ok()?);
    if !(1..=12).contains(&hour) || !(0..60).contains(&minute) {
        return None;
    }
    let hour = match meridiem.to_ascii_lowercase().as_str() {
        "am" => hour % 12,
        "pm" => hour % 12 + 12,
        _ => return None,
    };
    let mut parts = day.split_whitespace();
    let day: i64 = parts.next()?.parse().ok()?;
    let month = parts.next()?.trim_end_matches(',');
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))?;
    let year: i64 = parts.next()?.parse().ok()?;
    if parts.next().is_some() || !(1..=31).contains(&day) {
        return None;
    }
    let days = days_from_civil(year, i64::try_from(month).ok()? + 1, day);
    Some(prost_types::Timestamp {
        seconds: days * 86_400 + hour * 3_600 + minute * 60,
        nanos: 0,
    })
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The turns of a conversation in session order.
fn turns(conversation: &serde_json::Value) -> anyhow::Result<Vec<Turn>> {
    let object = conversation
        .as_object()
        .context("a conversation is a JSON object")?;
    let mut sessions: Vec<(u32, &serde_json::Value)> = object
        .iter()
        .filter_map(|(key, value)| Some((key.strip_prefix("session_")?.parse().ok()?, value)))
        .collect();
    sessions.sort_by_key(|(n, _)| *n);
    let mut turns = Vec::new();
    for (session, value) in sessions {
        let date = object
            .get(&format!("session_{session}_date_time"))
            .and_then(|d| d.as_str())
            .unwrap_or_default();
        let occurred_at = session_time(date);
        for turn in value.as_array().context("a session is a list of turns")? {
            let text = |key: &str| turn.get(key).and_then(|v| v.as_str()).unwrap_or_default();
            let mut content = format!("{}: {}", text("speaker"), text("text"));
            if !text("blip_caption").is_empty() {
                content.push_str(&format!(" [image: {}]", text("blip_caption")));
            }
            turns.push(Turn {
                dia_id: text("dia_id").to_owned(),
                content,
                session,
                date: date.to_owned(),
                occurred_at,
            });
        }
    }
    Ok(turns)
}

/// One conversation: its namespace, turns and evaluated questions.
pub struct Conversation {
    pub name: String,
    pub namespace: proto::Scope,
    pub turns: Vec<Turn>,
    pub questions: Vec<Question>,
}

pub struct Question {
    pub category: u64,
    pub text: String,
    pub evidence: HashSet<String>,
}

/// Reads a LoCoMo conversation file.
pub fn conversation(file: &Path) -> anyhow::Result<Conversation> {
    let name = file
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("conversation")
        .to_owned();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(file)?)?;
    let turns = turns(json.get("conversation").unwrap_or(&json))?;
    let known: HashSet<&str> = turns.iter().map(|t| t.dia_id.as_str()).collect();
    let mut questions = Vec::new();
    for qa in json
        .get("qa")
        .and_then(|q| q.as_array())
        .context("qa list")?
    {
        let category = qa.get("category").and_then(|c| c.as_u64()).unwrap_or(0);
        let evidence: HashSet<String> = qa
            .get("evidence")
            .and_then(|e| e.as_array())
            .into_iter()
            .flatten()
            .filter_map(|e| e.as_str())
            .flat_map(|e| e.split(';'))
            .map(str::trim)
            .filter(|id| known.contains(id))
            .map(str::to_owned)
            .collect();
        let text = qa
            .get("question")
            .and_then(|q| q.as_str())
            .unwrap_or_default();
        if EVALUATED_CATEGORIES.contains(&category)
            && !evidence.is_empty()
            && !text.trim().is_empty()
        {
            questions.push(Question {
                category,
                text: text.to_owned(),
                evidence,
            });
        }
    }
    Ok(Conversation {
        namespace: scope(&format!("locomo-{name}")),
        name,
        turns,
        questions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locomo_dates_are_read_as_utc_wall_clock_times() {
        // 2023-05-08T13:56:00Z.
        assert_eq!(
            session_time("1:56 pm on 8 May, 2023").map(|t| t.seconds),
            Some(1_683_554_160)
        );
        // Midnight and noon on the 12-hour clock; a leap day.
        assert_eq!(
            session_time("12:09 am on 29 February, 2024").map(|t| t.seconds),
            Some(1_709_165_340)
        );
        assert_eq!(
            session_time("12:00 pm on 1 January, 1970").map(|t| t.seconds),
            Some(12 * 3_600)
        );
        for unreadable in [
            "",
            "yesterday",
            "1:56 on 8 May, 2023",
            "1:56 pm on 8 Mai, 2023",
        ] {
            assert_eq!(session_time(unreadable), None, "{unreadable:?}");
        }
    }
}
