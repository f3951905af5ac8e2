//! Timestamps from a host-supplied clock value.
//!
//! The core never reads a clock; hosts pass milliseconds since the Unix epoch and these
//! helpers render them as RFC 3339 UTC strings (the format stored in the database, which
//! sorts lexically in time order and which SQLite's date functions understand).

/// Formats milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
///
/// ```
/// assert_eq!(engram_core::time::rfc3339_from_millis(0), "1970-01-01T00:00:00.000Z");
/// assert_eq!(
///     engram_core::time::rfc3339_from_millis(1_795_000_000_123),
///     "2026-11-18T11:06:40.123Z"
/// );
/// ```
pub fn rfc3339_from_millis(millis: i64) -> String {
    let secs = millis.div_euclid(1000);
    let ms = millis.rem_euclid(1000);
    let days = secs.div_euclid(86_400);
    let secs_of_day = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        secs_of_day / 3600,
        (secs_of_day / 60) % 60,
        secs_of_day % 60
    )
}

/// Parses a `YYYY-MM-DDTHH:MM:SS[.fff…]Z` timestamp (the stored format; any fraction, `Z`
/// or `+00:00`) to milliseconds since the Unix epoch; `None` for anything else.
///
/// ```
/// use engram_core::time::{millis_from_rfc3339, rfc3339_from_millis};
/// assert_eq!(millis_from_rfc3339("2026-11-18T11:06:40.123Z"), Some(1_795_000_000_123));
/// assert_eq!(millis_from_rfc3339(&rfc3339_from_millis(-1)), Some(-1));
/// assert_eq!(millis_from_rfc3339("yesterday"), None);
/// ```
pub fn millis_from_rfc3339(text: &str) -> Option<i64> {
    let text = text
        .strip_suffix('Z')
        .or_else(|| text.strip_suffix("+00:00"))?;
    let (date, time) = text.split_once('T')?;
    let mut date_parts = date.splitn(3, '-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: u32 = date_parts.next()?.parse().ok()?;
    let day: u32 = date_parts.next()?.parse().ok()?;
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) => (clock, fraction),
        None => (time, ""),
    };
    let mut clock_parts = clock.splitn(3, ':');
    let hour: i64 = clock_parts.next()?.parse().ok()?;
    let minute: i64 = clock_parts.next()?.parse().ok()?;
    let second: i64 = clock_parts.next()?.parse().ok()?;
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    if !fraction.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let millis: i64 = format!("{fraction:0<3}")[..3].parse().ok()?;
    let days = days_from_civil(year, month, day);
    Some(((days * 86_400 + hour * 3600 + minute * 60 + second) * 1000) + millis)
}

/// Converts a proleptic Gregorian date to days since 1970-01-01 (inverse of
/// [`civil_from_days`]).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let month_index = i64::from(if month > 2 { month - 3 } else { month + 9 });
    let day_of_year = (153 * month_index + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Converts days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    // Shift the epoch to 0000-03-01 so leap days fall at the end of a 400-year era.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_index + 2) / 5 + 1) as u32;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parsing_inverts_formatting() {
        for millis in [0, -1, 951_782_400_000, 4_107_542_400_000, 1_795_000_000_123] {
            assert_eq!(
                millis_from_rfc3339(&rfc3339_from_millis(millis)),
                Some(millis)
            );
        }
        assert_eq!(
            millis_from_rfc3339("2026-01-02T03:04:05Z"),
            Some(1_767_323_045_000)
        );
        assert_eq!(millis_from_rfc3339("2026-13-02T03:04:05Z"), None);
        assert_eq!(millis_from_rfc3339("2026-01-02T03:04:05.1x2Z"), None);
    }

    #[test]
    fn leap_days_and_negative_times() {
        assert_eq!(
            rfc3339_from_millis(951_782_400_000),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(rfc3339_from_millis(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(
            rfc3339_from_millis(4_107_542_400_000),
            "2100-03-01T00:00:00.000Z"
        );
    }
}
