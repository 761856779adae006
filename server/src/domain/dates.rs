//! Time expressions in text: absolute dates ("13 October 2023", "May
//! 2023", "2023-05-07", "in 2022") and relative ones ("yesterday", "last
//! week", "three days ago", "next month", "last Friday"), each resolved to
//! the span of time it names against an anchor — when a memory's thing
//! happened (its `occurred_at`) for what a memory says, now for a query.
//!
//! Spans are whole days, weeks (Monday to Sunday), months or years in UTC,
//! the calendar the rest of the service speaks. English only; what is not
//! recognised is simply not a time expression.
//!
//! The full-text index keeps what a memory's text mentions as terms of the
//! periods it names ([`stored_terms`]), resolved when the memory is
//! written, and a search adds the terms of the periods its query names
//! ([`query_terms`]).

use std::sync::LazyLock;

use regex::Regex;

use crate::domain::Micros;

const DAY: Micros = 86_400 * 1_000_000;

/// The months, by name, in lower case.
pub const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// How much time an expression names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grain {
    Day,
    Week,
    Month,
    Year,
}

/// A time expression found in a text and the span it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeSpan {
    /// The expression as written.
    pub text: String,
    /// The span: from `start` (inclusive) to `end` (exclusive).
    pub start: Micros,
    pub end: Micros,
    pub grain: Grain,
    /// Whether it was said relative to the anchor ("yesterday"), so that
    /// a reader needs the resolved date to know when it was.
    pub relative: bool,
}

impl TimeSpan {
    /// The span as a reader would say it: "7 May 2023", "the week of 1 May
    /// 2023", "May 2023", "2023".
    pub fn label(&self) -> String {
        let (year, month, day) = civil(self.start.div_euclid(DAY));
        let month_name = capitalised(MONTHS[(month - 1) as usize]);
        match self.grain {
            Grain::Day => format!("{day} {month_name} {year}"),
            Grain::Week => format!("the week of {day} {month_name} {year}"),
            Grain::Month => format!("{month_name} {year}"),
            Grain::Year => format!("{year}"),
        }
    }

    /// Whether `at` falls within the span.
    pub fn contains(&self, at: Micros) -> bool {
        (self.start..self.end).contains(&at)
    }

    /// Its first and last day, in days since 1970.
    fn days(&self) -> (i64, i64) {
        let first = self.start.div_euclid(DAY);
        (first, (self.end.div_euclid(DAY) - 1).max(first))
    }
}

/// What every time term starts with.
pub const TERM_MARK: char = '@';

/// Whether `term` is a time term (of [`stored_terms`] or [`query_terms`])
/// rather than a word's.
pub fn is_term(term: &str) -> bool {
    term.starts_with(TERM_MARK)
}

/// The most days a span is indexed or searched by, one term each (a
/// weekend is two).
const MAX_TERM_DAYS: i64 = 7;

/// The full-text index's terms for the spans a memory's text mentions
/// (issue 28): each span at its own grain and at every coarser one that
/// holds it — a day also as its week, month and year, a week as its
/// month and year, a month as its year. So "yesterday", written in a
/// memory of 8 May 2023, is found by a query for 7 May 2023, for the week
/// of 1 May 2023, for May 2023 and for 2023.
///
/// A term starts with [`TERM_MARK`], which no word's term can (words are
/// letters and digits).
pub fn stored_terms(spans: &[TimeSpan]) -> Vec<String> {
    let mut terms = Vec::new();
    for span in spans {
        let (first, last) = span.days();
        let mut own = Vec::new();
        match span.grain {
            Grain::Day => {
                for day in first..=last.min(first + MAX_TERM_DAYS - 1) {
                    own.push(day_term(day));
                    own.push(week_term(day));
                    own.push(month_term(day));
                    own.push(year_term(day));
                }
            }
            Grain::Week => {
                own.push(week_term(first));
                own.extend([first, last].map(month_term));
                own.extend([first, last].map(year_term));
            }
            Grain::Month => own.extend([month_term(first), year_term(first)]),
            Grain::Year => own.push(year_term(first)),
        }
        own.sort_unstable();
        own.dedup();
        terms.extend(own);
    }
    terms
}

/// The terms a query naming `spans` searches by: each span at its own
/// grain, which the index holds for every finer one within it (see
/// [`stored_terms`]). Distinct, in order.
pub fn query_terms(spans: &[TimeSpan]) -> Vec<String> {
    let mut terms: Vec<String> = Vec::new();
    for span in spans {
        let (first, last) = span.days();
        let own = match span.grain {
            Grain::Day => (first..=last.min(first + MAX_TERM_DAYS - 1))
                .map(day_term)
                .collect(),
            Grain::Week => vec![week_term(first)],
            Grain::Month => vec![month_term(first)],
            Grain::Year => vec![year_term(first)],
        };
        for term in own {
            if !terms.contains(&term) {
                terms.push(term);
            }
        }
    }
    terms
}

fn day_term(day: i64) -> String {
    let (year, month, day) = civil(day);
    format!("@{year:04}-{month:02}-{day:02}")
}

/// The term of the Monday-to-Sunday week holding `day`, by its Monday.
fn week_term(day: i64) -> String {
    let (year, month, day) = civil(day - weekday_of(day));
    format!("@w{year:04}-{month:02}-{day:02}")
}

fn month_term(day: i64) -> String {
    let (year, month, _) = civil(day);
    format!("@{year:04}-{month:02}")
}

fn year_term(day: i64) -> String {
    let (year, _, _) = civil(day);
    format!("@{year:04}")
}

/// The date of `at` as a reader would say it: "8 May 2023".
pub fn day_label(at: Micros) -> String {
    let (year, month, day) = civil(at.div_euclid(DAY));
    format!("{day} {} {year}", capitalised(MONTHS[(month - 1) as usize]))
}

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

static MONTH: &str = "(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)";

static EXPRESSION: LazyLock<Regex> = LazyLock::new(|| {
    let patterns = [
        // 2023-05-07
        r"(?P<iso>\b(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})\b)".to_owned(),
        // 13 October 2023, 1st of May, 2023
        format!(
            r"(?P<dmy>\b(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m1>{MONTH})\.?,?\s+(?P<y1>\d{{4}})\b)"
        ),
        // October 13, 2023
        format!(
            r"(?P<mdy>\b(?P<m2>{MONTH})\.?\s+(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{{4}})\b)"
        ),
        // May 2023
        format!(r"(?P<my>\b(?P<m3>{MONTH})\.?,?\s+(?P<y3>\d{{4}})\b)"),
        // in 2022, during 2021, of 2020
        r"(?P<year>\b(?:in|during|since|of|from)\s+(?P<y4>(?:19|20)\d{2})\b)".to_owned(),
        r"(?P<dby>\bthe\s+day\s+before\s+yesterday\b)".to_owned(),
        r"(?P<yesterday>\byesterday\b|\blast\s+night\b)".to_owned(),
        r"(?P<today>\btoday\b|\btonight\b|\bthis\s+(?:morning|afternoon|evening)\b)".to_owned(),
        r"(?P<tomorrow>\btomorrow\b)".to_owned(),
        r"(?P<ago>\b(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|a\s+few|a\s+couple\s+of)\s+(?P<unit>day|week|month|year)s?\s+ago\b)".to_owned(),
        r"(?P<shift>\b(?P<which>last|this|next|past)\s+(?P<period>week|weekend|month|year|monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)".to_owned(),
    ];
    Regex::new(&format!("(?i){}", patterns.join("|"))).expect("the time expressions compile")
});

/// The time expressions of `text`, in order, resolved against `anchor`.
pub fn find(text: &str, anchor: Micros) -> Vec<TimeSpan> {
    let today = anchor.div_euclid(DAY);
    EXPRESSION
        .captures_iter(text)
        .filter_map(|c| {
            let whole = c.get(0)?;
            let (start, end, grain, relative) = resolve(&c, today)?;
            Some(TimeSpan {
                text: whole.as_str().to_owned(),
                start: start * DAY,
                end: end * DAY,
                grain,
                relative,
            })
        })
        .collect()
}

/// The span (in days since 1970) of one matched expression, and whether
/// it was relative.
fn resolve(c: &regex::Captures, today: i64) -> Option<(i64, i64, Grain, bool)> {
    let number = |name: &str| c.name(name)?.as_str().parse::<i64>().ok();
    let month = |name: &str| month_number(c.name(name)?.as_str());
    let day = |y: i64, m: i64, d: i64| {
        (1..=days_in_month(y, m))
            .contains(&d)
            .then(|| (days(y, m, d), days(y, m, d) + 1, Grain::Day, false))
    };
    if c.name("iso").is_some() {
        let m = number("im").filter(|m| (1..=12).contains(m))?;
        return day(number("iy")?, m, number("id")?);
    }
    if c.name("dmy").is_some() {
        return day(number("y1")?, month("m1")?, number("d1")?);
    }
    if c.name("mdy").is_some() {
        return day(number("y2")?, month("m2")?, number("d2")?);
    }
    if c.name("my").is_some() {
        let (y, m) = (number("y3")?, month("m3")?);
        return Some(month_span(y, m, false));
    }
    if c.name("year").is_some() {
        let y = number("y4")?;
        return Some((days(y, 1, 1), days(y + 1, 1, 1), Grain::Year, false));
    }
    let on = |day: i64| Some((day, day + 1, Grain::Day, true));
    if c.name("dby").is_some() {
        return on(today - 2);
    }
    if c.name("yesterday").is_some() {
        return on(today - 1);
    }
    if c.name("today").is_some() {
        return on(today);
    }
    if c.name("tomorrow").is_some() {
        return on(today + 1);
    }
    let (year, month_now, _) = civil(today);
    if c.name("ago").is_some() {
        let n = count(c.name("n")?.as_str())?;
        return match c.name("unit")?.as_str().to_ascii_lowercase().as_str() {
            "day" => on(today - n),
            "week" => Some(week(today - 7 * n)),
            "month" => {
                let (y, m) = add_months(year, month_now, -n);
                Some(month_span(y, m, true))
            }
            _ => Some((
                days(year - n, 1, 1),
                days(year - n + 1, 1, 1),
                Grain::Year,
                true,
            )),
        };
    }
    if c.name("shift").is_some() {
        let step: i64 = match c.name("which")?.as_str().to_ascii_lowercase().as_str() {
            "last" | "past" => -1,
            "next" => 1,
            _ => 0,
        };
        let period = c.name("period")?.as_str().to_ascii_lowercase();
        return match period.as_str() {
            "week" => Some(week(today + 7 * step)),
            "weekend" => {
                // The Saturday and Sunday of that week.
                let (monday, _, _, _) = week(today + 7 * step);
                Some((monday + 5, monday + 7, Grain::Day, true))
            }
            "month" => {
                let (y, m) = add_months(year, month_now, step);
                Some(month_span(y, m, true))
            }
            "year" => Some((
                days(year + step, 1, 1),
                days(year + step + 1, 1, 1),
                Grain::Year,
                true,
            )),
            weekday => {
                let target = WEEKDAYS.iter().position(|w| *w == weekday)? as i64;
                let now = weekday_of(today);
                let offset = match step {
                    // The last such day before today.
                    -1 => -((now - target - 1).rem_euclid(7) + 1),
                    // The next such day after today.
                    1 => (target - now - 1).rem_euclid(7) + 1,
                    // This week's.
                    _ => target - now,
                };
                on(today + offset)
            }
        };
    }
    None
}

fn count(word: &str) -> Option<i64> {
    let word = word.to_ascii_lowercase();
    let word = word.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(match word.as_str() {
        "a" | "an" | "one" => 1,
        "two" | "a couple of" => 2,
        "three" | "a few" => 3,
        "four" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        digits => digits.parse().ok().filter(|n| *n <= 1_000)?,
    })
}

fn month_number(name: &str) -> Option<i64> {
    // By characters: case-insensitive matching lets "ſ" (long s) and the
    // Kelvin sign in, which are more than one byte.
    let prefix: String = name
        .chars()
        .take(3)
        .collect::<String>()
        .to_ascii_lowercase();
    MONTHS
        .iter()
        .position(|m| m.starts_with(&prefix))
        .map(|i| i as i64 + 1)
}

fn month_span(year: i64, month: i64, relative: bool) -> (i64, i64, Grain, bool) {
    let (next_year, next_month) = add_months(year, month, 1);
    (
        days(year, month, 1),
        days(next_year, next_month, 1),
        Grain::Month,
        relative,
    )
}

/// The Monday-to-Sunday week holding `day`.
fn week(day: i64) -> (i64, i64, Grain, bool) {
    let monday = day - weekday_of(day);
    (monday, monday + 7, Grain::Week, true)
}

/// 0 for Monday … 6 for Sunday (1970-01-01 was a Thursday).
fn weekday_of(day: i64) -> i64 {
    (day + 3).rem_euclid(7)
}

fn add_months(year: i64, month: i64, delta: i64) -> (i64, i64) {
    let index = year * 12 + (month - 1) + delta;
    (index.div_euclid(12), index.rem_euclid(12) + 1)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    let (next_year, next_month) = add_months(year, month, 1);
    days(next_year, next_month, 1) - days(year, month, 1)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
/// (Howard Hinnant's `days_from_civil`).
pub fn days(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The (year, month, day) of a day since 1970 (`civil_from_days`).
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-05-08 (a Monday), 13:56.
    const ANCHOR: Micros = (19_485 * 86_400 + 13 * 3_600 + 56 * 60) * 1_000_000;

    fn labels(text: &str) -> Vec<(String, String)> {
        find(text, ANCHOR)
            .into_iter()
            .map(|s| (s.text.clone(), s.label()))
            .collect()
    }

    fn pair(text: &str, label: &str) -> (String, String) {
        (text.to_owned(), label.to_owned())
    }

    #[test]
    fn the_anchor_is_the_day_the_tests_think_it_is() {
        assert_eq!(days(2023, 5, 8), 19_485);
        assert_eq!(civil(19_485), (2023, 5, 8));
        assert_eq!(weekday_of(19_485), 0);
        assert_eq!(day_label(ANCHOR), "8 May 2023");
    }

    #[test]
    fn relative_expressions_resolve_against_the_anchor() {
        assert_eq!(
            labels("I went to the LGBTQ support group yesterday and it was great"),
            [pair("yesterday", "7 May 2023")]
        );
        assert_eq!(
            labels("Last week we moved; two days ago I painted; last Friday a race"),
            [
                pair("Last week", "the week of 1 May 2023"),
                pair("two days ago", "6 May 2023"),
                pair("last Friday", "5 May 2023"),
            ]
        );
        assert_eq!(
            labels("next month we go camping, a few years ago I got a tattoo"),
            [
                pair("next month", "June 2023"),
                pair("a few years ago", "2020")
            ]
        );
        assert_eq!(
            labels("last weekend, tonight, this year, the day before yesterday"),
            [
                pair("last weekend", "6 May 2023"),
                pair("tonight", "8 May 2023"),
                pair("this year", "2023"),
                pair("the day before yesterday", "6 May 2023"),
            ]
        );
        let weekend = &find("last weekend", ANCHOR)[0];
        assert_eq!(weekend.end - weekend.start, 2 * DAY);
        assert!(find("yesterday", ANCHOR)[0].relative);
    }

    #[test]
    fn absolute_dates_name_their_day_month_or_year() {
        assert_eq!(
            labels("on October 13, 2023 and 1 February, 2023 and the 3rd of March 2022"),
            [
                pair("October 13, 2023", "13 October 2023"),
                pair("1 February, 2023", "1 February 2023"),
                pair("3rd of March 2022", "3 March 2022"),
            ]
        );
        assert_eq!(
            labels("in May 2023, in 2022, 2023-05-07"),
            [
                pair("May 2023", "May 2023"),
                pair("in 2022", "2022"),
                pair("2023-05-07", "7 May 2023"),
            ]
        );
        let may = &find("May 2023", ANCHOR)[0];
        assert!(may.contains(ANCHOR) && !may.relative);
        assert!(!may.contains(ANCHOR + 30 * DAY));
    }

    #[test]
    fn a_mentioned_day_is_found_by_its_day_week_month_and_year() {
        let stored = stored_terms(&find("I went to the support group yesterday", ANCHOR));
        assert_eq!(
            stored,
            ["@2023", "@2023-05", "@2023-05-07", "@w2023-05-01"],
            "a day, and the week (from Monday 1 May), month and year holding it"
        );
        for query in ["on 7 May 2023", "last week", "in May 2023", "in 2023"] {
            let searched = query_terms(&find(query, ANCHOR));
            assert_eq!(searched.len(), 1, "{query}: {searched:?}");
            assert!(stored.contains(&searched[0]), "{query}: {searched:?}");
        }
        // Another day, or a month the memory does not speak of, is not.
        for query in ["on 6 May 2023", "in June 2023", "in 2022"] {
            let searched = query_terms(&find(query, ANCHOR));
            assert!(!stored.contains(&searched[0]), "{query}: {searched:?}");
        }
    }

    #[test]
    fn coarser_mentions_are_found_by_their_grain_and_coarser_only() {
        let stored = stored_terms(&find("next month, and last week", ANCHOR));
        assert_eq!(
            stored,
            ["@2023", "@2023-06", "@2023", "@2023-05", "@w2023-05-01"]
        );
        // A query for a day within them is not a match: the memory does
        // not say which day.
        let day = query_terms(&find("on 2 May 2023", ANCHOR));
        assert!(!stored.contains(&day[0]));
        // A weekend searches by both of its days; the same day twice
        // once.
        assert_eq!(
            query_terms(&find("last weekend, and on 6 May 2023", ANCHOR)),
            ["@2023-05-06", "@2023-05-07"]
        );
    }

    #[test]
    fn what_is_no_date_is_not_one() {
        assert!(
            find(
                "31 February 2023, 2023-13-01, may I ask, 2023 people",
                ANCHOR
            )
            .is_empty()
        );
        assert!(find("This is the week's plan; I may come", ANCHOR).is_empty());
        // Letters that fold to ASCII ones but are not: no date, and no panic.
        assert!(find("ſeptember 2023, \u{212a}", ANCHOR).is_empty());
    }
}
