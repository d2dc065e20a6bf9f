//! `format` values as regular expressions over the *content* of a JSON string
//! (the characters between the quotes). Every pattern here only uses ASCII
//! characters that JSON writes unescaped, so the content regex is also the
//! regex of the raw text between the quotes (an escaped `\/` in a URI is not
//! accepted; see the module documentation of `schema`).

const DATE: &str = "[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])";
const TIME: &str = "(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)(?:\\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])";
const OCTET: &str = "(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
const HEX: &str = "[0-9a-fA-F]";

/// The content regex of a supported `format`, or `None` for a format this
/// module does not enforce.
///
/// Enforced: `date`, `time`, `date-time` (RFC 3339, day 31 allowed in every
/// month), `email` (dot-atom local part, dotted domain), `uuid`, `uri`
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
