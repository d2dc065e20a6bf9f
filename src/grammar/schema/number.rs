//! Numeric ranges as regular expressions over JSON number text.
//!
//! [`int_range`] gives the exact language of decimal integers (JSON syntax: no
//! leading zeros, optional `-`, and `-0`) in an inclusive range, each side
//! possibly unbounded. [`number_range`] extends it to JSON numbers without an
//! exponent whose value lies between two *integer* bounds: a number with a
//! nonzero fraction `±n.f` lies strictly between two consecutive integers, so
//! its range condition only constrains the integer part `n`.

/// Decimal digits of `n`.
fn digits(n: u128) -> Vec<u8> {
    n.to_string().into_bytes()
}

/// Exact regex for the digit strings of length `a.len()` between `a` and `b`
/// (`a <= b`, same length).
fn same_len(a: &[u8], b: &[u8]) -> String {
    if a.is_empty() {
        return String::new();
    }
    if a[0] == b[0] {
        return format!("{}{}", a[0] as char, same_len(&a[1..], &b[1..]));
    }
    let n = a.len() - 1;
    let low_full = a[1..].iter().all(|&d| d == b'0');
    let high_full = b[1..].iter().all(|&d| d == b'9');
    let mut parts = Vec::new();
    let mut lo_d = a[0];
    if !low_full {
        parts.push(format!(
            "{}{}",
            a[0] as char,
            same_len(&a[1..], &vec![b'9'; n])
        ));
        lo_d += 1;
    }
    let hi_d = if high_full { b[0] } else { b[0] - 1 };
    if lo_d <= hi_d {
        let class = if lo_d == hi_d {
            (lo_d as char).to_string()
        } else {
            format!("[{}-{}]", lo_d as char, hi_d as char)
        };
        parts.push(match n {
            0 => class,
            1 => format!("{class}[0-9]"),
            _ => format!("{class}[0-9]{{{n}}}"),
        });
    }
    if !high_full {
        parts.push(format!(
            "{}{}",
            b[0] as char,
            same_len(&vec![b'0'; n], &b[1..])
        ));
    }
    if parts.len() == 1 {
        parts.pop().unwrap_or_default()
    } else {
        format!("(?:{})", parts.join("|"))
    }
}

/// Exact regex for the decimal representations (without leading zeros) of
/// the naturals in `lo..=hi` (`hi == None`: unbounded). `None` if the range is
/// empty.
pub fn nat_range(lo: u128, hi: Option<u128>) -> Option<String> {
    if hi.is_some_and(|h| h < lo) {
        return None;
    }
    let lo_len = digits(lo).len();
    let hi_len = hi.map_or(lo_len, |h| digits(h).len());
    let mut alts = Vec::new();
    for len in lo_len..=hi_len {
        let first = 10u128.pow(len as u32 - 1);
        let a = if len == lo_len { lo } else { first };
        let b = match hi {
            Some(h) if len == hi_len => h,
            _ => 10u128.pow(len as u32) - 1,
        };
        let a = if len == 1 { a } else { a.max(first) };
        alts.push(same_len(&digits(a), &digits(b)));
    }
    if hi.is_none() {
        alts.push(format!("[1-9][0-9]{{{lo_len},}}"));
    }
    Some(if alts.len() == 1 {
        alts.pop().unwrap_or_default()
    } else {
        format!("(?:{})", alts.join("|"))
    })
}

/// Exact regex for the JSON integers (digits only, no fraction or exponent)
/// whose value is in `lo..=hi` (`None`: unbounded on that side). `-0` is
/// included when 0 is. `None` if the range is empty.
pub fn int_range(lo: Option<i128>, hi: Option<i128>) -> Option<String> {
    if let (Some(l), Some(h)) = (lo, hi) {
        if l > h {
            return None;
        }
    }
    let mut alts = Vec::new();
    // Nonnegative values.
    if hi.is_none_or(|h| h >= 0) {
        let l = lo.map_or(0, |l| l.max(0)) as u128;
        if let Some(r) = nat_range(l, hi.map(|h| h as u128)) {
            alts.push(r);
        }
    }
    // Negative values -n, n >= 1: lo <= -n <= hi  <=>  max(1, -hi) <= n <= -lo.
    if lo.is_none_or(|l| l < 0) {
        let nlo = hi.map_or(1, |h| (-h).max(1)) as u128;
        let nhi = lo.map(|l| (-l) as u128);
        if let Some(r) = nat_range(nlo, nhi) {
            alts.push(format!("-{r}"));
        }
    }
    if lo.is_none_or(|l| l <= 0) && hi.is_none_or(|h| h >= 0) {
        alts.push("-0".to_string());
    }
    match alts.len() {
        0 => None,
        1 => alts.pop(),
        _ => Some(format!("(?:{})", alts.join("|"))),
    }
}

/// Exact regex for JSON numbers *without exponent* whose value is in
/// `lo..=hi` (integer bounds, `None`: unbounded). Integer values may carry a
/// zero fraction (`3.00`); other values need the integer part in range as
/// described in the module documentation.
pub fn number_range(lo: Option<i128>, hi: Option<i128>) -> Option<String> {
    let ints = int_range(lo, hi).map(|i| format!("{i}(?:\\.0+)?"));
    match (ints, fraction_range(lo, hi)) {
        (Some(a), Some(b)) => Some(format!("(?:{a}|{b})")),
        (a, b) => a.or(b),
    }
}

/// Exact regex for JSON numbers with a *nonzero* fraction and no exponent
/// whose value is in `lo..=hi` (integer bounds, `None`: unbounded).
pub fn fraction_range(lo: Option<i128>, hi: Option<i128>) -> Option<String> {
    let mut alts = Vec::new();
    const FRAC: &str = "\\.[0-9]*[1-9][0-9]*";
    // +n.f in (n, n+1): lo <= n and n + 1 <= hi.
    let plo = lo.map_or(0, |l| l.max(0)) as u128;
    let phi = match hi {
        Some(h) if h < 1 => None,
        Some(h) => Some(Some((h - 1) as u128)),
        None => Some(None),
    };
    if let Some(phi) = phi {
        if let Some(r) = nat_range(plo, phi) {
            alts.push(format!("{r}{FRAC}"));
        }
    }
    // -n.f in (-n-1, -n): lo <= -n-1 and -n <= hi, n >= 0.
    let nlo = hi.map_or(0, |h| (-h).max(0)) as u128;
    let nhi = match lo {
        Some(l) if l > -1 => None,
        Some(l) => Some(Some((-l - 1) as u128)),
        None => Some(None),
    };
    if let Some(nhi) = nhi {
        if let Some(r) = nat_range(nlo, nhi) {
            alts.push(format!("-{r}{FRAC}"));
        }
    }
    match alts.len() {
        0 => None,
        1 => alts.pop(),
        _ => Some(format!("(?:{})", alts.join("|"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> regex::Regex {
        regex::Regex::new(&format!("^(?:{p})$")).expect("valid regex")
    }

    #[test]
    fn int_range_brute_force() {
        let bounds = [
            None,
            Some(-1000),
            Some(-999),
            Some(-101),
            Some(-100),
            Some(-37),
            Some(-10),
            Some(-9),
            Some(-1),
            Some(0),
            Some(1),
            Some(7),
            Some(9),
            Some(10),
            Some(99),
            Some(100),
            Some(250),
            Some(509),
            Some(999),
            Some(1000),
        ];
        for &lo in &bounds {
            for &hi in &bounds {
                let r = int_range(lo, hi);
                let inside = |n: i128| lo.is_none_or(|l| n >= l) && hi.is_none_or(|h| n <= h);
                let Some(r) = r else {
                    assert!((-1500..1500).all(|n| !inside(n)), "{lo:?}..{hi:?}");
                    continue;
                };
                let m = re(&r);
                for n in -1500i128..1500 {
                    assert_eq!(
                        m.is_match(&n.to_string()),
                        inside(n),
                        "{n} in {lo:?}..{hi:?} via {r}"
                    );
                }
                assert_eq!(m.is_match("-0"), inside(0));
                for bad in ["01", "-01", "00", "+1", "", "-", "1.5"] {
                    assert!(!m.is_match(bad), "{bad} via {r}");
                }
            }
        }
    }

    #[test]
    fn number_range_brute_force() {
        let bounds = [
            None,
            Some(-100),
            Some(-3),
            Some(-1),
            Some(0),
            Some(1),
            Some(42),
            Some(1000),
        ];
        for &lo in &bounds {
            for &hi in &bounds {
                let Some(r) = number_range(lo, hi) else {
                    continue;
                };
                let m = re(&r);
                for tenths in -12000i128..12000 {
                    let s = format!(
                        "{}{}.{}",
                        if tenths < 0 { "-" } else { "" },
                        tenths.abs() / 10,
                        tenths.abs() % 10
                    );
                    let inside =
                        lo.is_none_or(|l| tenths >= 10 * l) && hi.is_none_or(|h| tenths <= 10 * h);
                    assert_eq!(m.is_match(&s), inside, "{s} in {lo:?}..{hi:?} via {r}");
                }
            }
        }
    }

    #[test]
    fn big_ranges() {
        let r = re(&int_range(Some(0), Some(u64::MAX as i128)).unwrap());
        assert!(r.is_match("18446744073709551615"));
        assert!(!r.is_match("18446744073709551616"));
        let r = re(&int_range(Some(123_456), None).unwrap());
        assert!(r.is_match("123456") && r.is_match("99999999999999999999999"));
        assert!(!r.is_match("123455"));
    }
}
