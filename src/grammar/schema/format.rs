//! `format` values as regular expressions over the *content* of a JSON string
//! (the characters between the quotes). Every pattern here only uses ASCII
//! characters that JSON writes unescaped, so the content regex is also the
//! regex of the raw text between the quotes (an escaped `\/` in a URI is not
//! accepted; see the module documentation of `schema`).

/// RFC 3339 `full-date`, exact: each month's days, and 29 February only in
/// leap years (Gregorian: a multiple of 4, except centuries not a multiple of
/// 400). A two-digit number is a multiple of 4 when its tens digit is even and
/// its ones 0, 4 or 8, or the tens odd and the ones 2 or 6.
const DATE: &str = concat!(
    "(?:[0-9]{4}-(?:",
    "(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])",
    "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)",
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))",
    "|(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:[02468][048]|[13579][26])00)-02-29)"
);
const TIME: &str = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
const OCTET: &str = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const HEX: &str = "[0-9a-fA-F]";

/// The content regex of a supported `format`, or `None` for a format this
/// module does not enforce.
///
/// Enforced: `date`, `time`, `date-time` (RFC 3339; days per month and leap
/// years exact; a leap second `:60` is allowed at any time), `email` (dot-atom local part, dotted domain), `uuid`, `uri`
/// (scheme, `:`, then printable ASCII other than space, `"`, `\`, `<`, `>`),
/// `uri-reference`, `ipv4`, `hostname`, `duration` (ISO 8601, simplified).
pub fn content_regex(format: &str) -> Option<String> {
    Some(match format {
        "date" => DATE.to_string(),
        "time" => TIME.to_string(),
        "date-time" => format!("{DATE}[Tt ]{TIME}"),
        "email" => "[A-Za-z0-9!#$%&'*+=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+=?^_`{|}~-]+)*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+".to_string(),
        "uuid" => format!("{HEX}{{8}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{4}}-{HEX}{{12}}"),
        "uri" => "[A-Za-z][A-Za-z0-9+.-]*:[!#-\\[\\]-~&&[^<>]]*".to_string(),
        "uri-reference" => "[!#-\\[\\]-~&&[^<>]]*".to_string(),
        "ipv4" => format!("{OCTET}(?:\\.{OCTET}){{3}}"),
        "hostname" => "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*".to_string(),
        "duration" => "P(?:(?:[0-9]+Y)?(?:[0-9]+M)?(?:[0-9]+D)?(?:T(?:[0-9]+H)?(?:[0-9]+M)?(?:[0-9]+(?:\\.[0-9]+)?S)?)?|[0-9]+W)".to_string(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::content_regex;

    fn m(f: &str, s: &str) -> bool {
        let r = regex::Regex::new(&format!("^(?:{})$", content_regex(f).unwrap())).unwrap();
        r.is_match(s)
    }

    /// maskbench Glaiveai2K---search_news_8fefc2c7: `2022-02-31` was accepted.
    #[test]
    fn dates_are_exact_calendar_dates() {
        let leap =
            |y: u32| y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
        let days = |y: u32, m: u32| match m {
            2 if leap(y) => 29,
            2 => 28,
            4 | 6 | 9 | 11 => 30,
            _ => 31,
        };
        let years = (1890..2110)
            .chain((0..=2400).step_by(100))
            .chain([0, 4, 9996, 9999]);
        for y in years {
            for mo in 0..=13 {
                for d in 0..=32 {
                    let valid = (1..=12).contains(&mo) && d >= 1 && d <= days(y, mo);
                    let s = format!("{y:04}-{mo:02}-{d:02}");
                    assert_eq!(m("date", &s), valid, "{s}");
                }
            }
        }
        assert!(m("date-time", "2024-02-29T00:00:00Z") && !m("date-time", "2023-02-29T00:00:00Z"));
    }

    #[test]
    fn formats() {
        assert!(m("date", "2024-02-29") && !m("date", "2024-13-01") && !m("date", "24-01-01"));
        assert!(
            m("date-time", "2024-01-01T10:20:30.5Z") && m("date-time", "2024-01-01T10:20:30+02:00")
        );
        assert!(!m("date-time", "2024-01-01T25:20:30Z"));
        assert!(m("time", "23:59:60Z") && !m("time", "23:59"));
        assert!(m("email", "a.b+c@example.co.uk") && !m("email", "a@b") && !m("email", "@b.c"));
        assert!(m("uuid", "123e4567-e89b-12d3-a456-426614174000") && !m("uuid", "123e4567"));
        assert!(
            m("uri", "https://example.com/a?b=c#d")
                && !m("uri", "example.com")
                && !m("uri", "a:b c")
        );
        assert!(m("ipv4", "192.168.0.255") && !m("ipv4", "256.1.1.1") && !m("ipv4", "01.1.1.1"));
        assert!(m("hostname", "a-b.example") && !m("hostname", "-a.example"));
        assert!(m("duration", "P3Y6M4DT12H30M5S") && m("duration", "P4W") && !m("duration", "3Y"));
    }
}
