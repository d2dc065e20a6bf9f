//! `multipleOf` (with the numeric bounds) as one regular expression over JSON
//! number text.
//!
//! A JSON number without exponent `±I.F` is a multiple of `p / 10^s` (the
//! step, `p` a positive integer, `s` its fraction digits: `0.01` is `1/10^2`,
//! `1.5` is `15/10^1`, `6` is `6/10^0`) iff `N = I·10^s + F[..s]` (the first
//! `s` fraction digits, padded with zeros) is divisible by `p` and the
//! fraction digits past the `s`-th are all `0`. Bounds become integer bounds
//! on the signed `N` (`minimum: 0.333` with step `0.01` is `N ≥ 34`), exact
//! with decimal arithmetic on the bounds' JSON text.
//!
//! [`pattern`] builds a DFA over the letters `0`–`9`, `.`, `-` whose states
//! are: the phase (nothing read, sign read, integer part, a lone `0`, `.`
//! read, fraction), the residue of `N` so far modulo `p` (reading digit `d`:
//! `r ← (10·r + d) mod p`), and, per bound, the comparison of the digits read
//! with the bound's digits (integer part by length then lexically, fraction
//! lexically on `s` digits). Accepting states are those whose padded value is
//! `≡ 0 (mod p)` and within the bounds. The DFA is minimised (Hopcroft, from
//! [`crate::automata::minimize`]) and turned into a regular expression by
//! state elimination (states with the fewest in × out edges first).
//!
//! Cost: the DFA has at most `2 · (L + 3) · 9 · p` states before minimisation
//! (`L` the digits of the largest bound's integer part), limited by
//! [`MAX_DFA_STATES`]; the regex is limited to [`MAX_PATTERN_BYTES`]. Steps
//! whose numerator `p` has only the factors 2 and 5 (`2`, `5`, `10`, `100`,
//! `0.5`, `0.01`, `0.25`) give a few states and a pattern of a few hundred
//! bytes, `3` and `9` about a kilobyte, while `7` or `11` (and most `p`
//! coprime to 10 above 3, or any `p` combined with wide bounds) exceed the
//! limit: the caller then reports `multipleOf` as not enforced.
//!
//! Numbers written with an exponent are not accepted (as for bounded
//! numbers; JSON `integer` never accepts them).

use crate::automata::minimize::hopcroft;
use serde_json::Number;

/// Most DFA states built before minimisation.
pub const MAX_DFA_STATES: usize = 200_000;

/// Longest regular expression produced.
pub const MAX_PATTERN_BYTES: usize = 24_000;

/// Largest numerator of a step.
pub const MAX_NUMERATOR: u128 = 100_000;

/// Bounds beyond this (after scaling by `10^s`) are not handled.
const MAX_BOUND: u128 = 10u128.pow(36);

/// A nonnegative decimal `mant · 10^exp` with its sign, parsed exactly from
/// JSON number text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decimal {
    /// Negative.
    pub neg: bool,
    /// The digits as an integer.
    pub mant: u128,
    /// Power of ten.
    pub exp: i32,
}

impl Decimal {
    /// Parses JSON number text (`-1.25e3`); `None` past 38 significant digits
    /// or an exponent beyond ±10⁴.
    pub fn parse(text: &str) -> Option<Decimal> {
        let (neg, t) = match text.strip_prefix('-') {
            Some(t) => (true, t),
            None => (false, text),
        };
        let (num, e) = match t.find(['e', 'E']) {
            Some(i) => (&t[..i], t[i + 1..].parse::<i32>().ok()?),
            None => (t, 0),
        };
        if e.abs() > 10_000 {
            return None;
        }
        let (int, frac) = num.split_once('.').unwrap_or((num, ""));
        if int.is_empty() || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = format!("{int}{frac}");
        let digits = digits.trim_start_matches('0');
        let mut exp = e - frac.len() as i32;
        let trimmed = digits.trim_end_matches('0');
        exp += (digits.len() - trimmed.len()) as i32;
        if trimmed.len() > 38 {
            return None;
        }
        let mant = if trimmed.is_empty() {
            exp = 0;
            0
        } else {
            trimmed.parse::<u128>().ok()?
        };
        Some(Decimal {
            neg: neg && mant != 0,
            mant,
            exp,
        })
    }

    /// From a JSON number.
    pub fn of(n: &Number) -> Option<Decimal> {
        Decimal::parse(&n.to_string())
    }
}

/// The step `p / 10^s` of a positive `multipleOf` value, reduced (`p` not a
/// multiple of 10 when `s > 0`).
pub fn step(d: Decimal) -> Result<(u128, u32), String> {
    if d.neg || d.mant == 0 {
        return Err("multipleOf must be a positive number".into());
    }
    let (p, s) = if d.exp >= 0 {
        let p = 10u128
            .checked_pow(d.exp as u32)
            .and_then(|x| x.checked_mul(d.mant))
            .filter(|p| *p <= MAX_NUMERATOR);
        (p, 0)
    } else {
        (Some(d.mant), (-d.exp) as u32)
    };
    match p {
        Some(p) if p <= MAX_NUMERATOR && s <= 30 => Ok((p, s)),
        _ => Err(format!(
            "steps with a numerator above {MAX_NUMERATOR} or more than 30 fraction digits \
             are not expanded"
        )),
    }
}

/// The least common multiple of two `multipleOf` values (JSON numbers), as
/// a JSON number: the numbers that are multiples of both are its multiples.
/// `None` when a value is not a positive decimal or the result passes
/// [`MAX_NUMERATOR`] (the caller then keeps both, reported).
pub fn lcm_value(a: &serde_json::Value, b: &serde_json::Value) -> Option<serde_json::Value> {
    let (Some(x), Some(y)) = (a.as_number(), b.as_number()) else {
        return None;
    };
    let (p, s) = step(Decimal::of(x)?).ok()?;
    let (q, t) = step(Decimal::of(y)?).ok()?;
    let m = s.max(t);
    let a = p.checked_mul(10u128.checked_pow(m - s)?)?;
    let b = q.checked_mul(10u128.checked_pow(m - t)?)?;
    let g = gcd(a, b);
    let l = (a / g).checked_mul(b)?;
    // l / 10^m, reduced.
    let (mut l, mut m) = (l, m);
    while m > 0 && l % 10 == 0 {
        l /= 10;
        m -= 1;
    }
    if l > MAX_NUMERATOR * 10u128.pow(m.min(20)) {
        return None;
    }
    let text = if m == 0 {
        l.to_string()
    } else {
        let digits = format!("{l:0>w$}", w = m as usize + 1);
        let (i, f) = digits.split_at(digits.len() - m as usize);
        format!("{i}.{f}")
    };
    serde_json::from_str(&text).ok()
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// `⌈v · 10^s⌉` (`up`) or `⌊v · 10^s⌋`, exact; `None` past [`MAX_BOUND`].
fn scaled(v: Decimal, s: u32, up: bool) -> Option<i128> {
    let e = v.exp + s as i32;
    let mag: u128 = if e >= 0 {
        10u128.checked_pow(e as u32)?.checked_mul(v.mant)?
    } else {
        let div = if -e > 38 {
            None
        } else {
            10u128.checked_pow((-e) as u32)
        };
        match div {
            Some(div) => {
                let q = v.mant / div;
                // Round the magnitude away from zero when the signed value
                // rounds that way.
                let inexact = !v.mant.is_multiple_of(div);
                if inexact && (up != v.neg) {
                    q + 1
                } else {
                    q
                }
            }
            // Far below one unit: the magnitude is 0 or 1.
            None => u128::from(v.mant != 0 && (up != v.neg)),
        }
    };
    if mag > MAX_BOUND {
        return None;
    }
    Some(if v.neg { -(mag as i128) } else { mag as i128 })
}

/// A numeric bound: the value and whether it is exclusive.
pub type Bound = (Decimal, bool);

/// The integer bounds of `N` (the value times `10^s`) for value bounds `lo`
/// and `hi`.
fn scaled_bounds(
    lo: &[Bound],
    hi: &[Bound],
    s: u32,
) -> Result<(Option<i128>, Option<i128>), String> {
    let far = || {
        format!(
            "bounds beyond 1e{} are not combined with multipleOf",
            36 - s as i32
        )
    };
    let mut nlo = None;
    for &(v, ex) in lo {
        // N ≥ ⌈x⌉, or N > x: N ≥ ⌊x⌋ + 1.
        let n = if ex {
            scaled(v, s, false).map(|f| f + 1)
        } else {
            scaled(v, s, true)
        };
        let n = n.ok_or_else(far)?;
        nlo = Some(nlo.map_or(n, |m: i128| m.max(n)));
    }
    let mut nhi = None;
    for &(v, ex) in hi {
        let n = if ex {
            scaled(v, s, true).map(|c| c - 1)
        } else {
            scaled(v, s, false)
        };
        let n = n.ok_or_else(far)?;
        nhi = Some(nhi.map_or(n, |m: i128| m.min(n)));
    }
    Ok((nlo, nhi))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Cmp {
    Less,
    Eq,
    Greater,
}

fn cmp_digit(a: u8, b: u8) -> Cmp {
    match a.cmp(&b) {
        std::cmp::Ordering::Less => Cmp::Less,
        std::cmp::Ordering::Equal => Cmp::Eq,
        std::cmp::Ordering::Greater => Cmp::Greater,
    }
}

/// A bound on the magnitude `N ≥ 0` of one sign: its integer digits (of
/// `N / 10^s`) and its `s` fraction digits.
#[derive(Clone, Debug)]
struct Mag {
    int: Vec<u8>,
    frac: Vec<u8>,
}

impl Mag {
    fn new(n: u128, s: u32) -> Mag {
        let scale = 10u128.pow(s);
        let int = (n / scale).to_string().into_bytes();
        let frac = format!("{:0w$}", n % scale, w = s as usize).into_bytes();
        let frac = if s == 0 { Vec::new() } else { frac };
        Mag { int, frac }
    }
}

/// The magnitude bounds of one sign; `None` when no number of that sign is
/// in range.
#[derive(Clone, Debug)]
struct Side {
    lo: Option<Mag>,
    hi: Option<Mag>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Phase {
    Start,
    Sign,
    Int,
    Zero,
    Dot,
    Frac,
    Dead,
}

/// A DFA state (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct St {
    phase: Phase,
    neg: bool,
    /// Integer digits read (capped), or fraction digits read (capped at s).
    len: u32,
    lo: Cmp,
    hi: Cmp,
    r: u128,
}

const DEAD: St = St {
    phase: Phase::Dead,
    neg: false,
    len: 0,
    lo: Cmp::Eq,
    hi: Cmp::Eq,
    r: 0,
};

/// The letters: `0`–`9`, `.`, `-`.
const LETTERS: usize = 12;

struct Spec {
    p: u128,
    s: u32,
    integer: bool,
    no_fraction: bool,
    sides: [Option<Side>; 2],
    /// Integer digits past which every comparison is settled.
    cap: u32,
}

impl Spec {
    fn side(&self, neg: bool) -> Option<&Side> {
        self.sides[neg as usize].as_ref()
    }

    /// The comparison of the integer part read (of `len` digits, lexical
    /// flag `flag`) with the bound's integer part.
    fn resolve_int(flag: Cmp, len: u32, b: &Mag) -> Cmp {
        if (len as usize) < b.int.len() {
            Cmp::Less
        } else {
            flag
        }
    }

    /// Whether the text read so far, ended here, is a number in the language.
    fn accepts(&self, st: &St) -> bool {
        let Some(side) = self.side(st.neg) else {
            return false;
        };
        // Fraction digits read, and where the bound's fraction digits still
        // to compare with the (zero) padding start.
        let (frac_read, from) = match st.phase {
            Phase::Int | Phase::Zero => (0, 0),
            Phase::Frac => (st.len, st.len as usize),
            _ => return false,
        };
        let in_int = frac_read == 0 && st.phase != Phase::Frac;
        // The final comparison of the number read, padded with zeros, with
        // bound `b` (lexical flag `flag`).
        let cmp_of = |flag: Cmp, b: &Mag| {
            let c = if in_int {
                Spec::resolve_int(flag, st.len, b)
            } else {
                flag
            };
            let rest_nonzero = b
                .frac
                .get(from..)
                .is_some_and(|r| r.iter().any(|&d| d != b'0'));
            if c == Cmp::Eq && rest_nonzero {
                Cmp::Less
            } else {
                c
            }
        };
        let pad = self.s - frac_read.min(self.s);
        let mut r = st.r;
        for _ in 0..pad {
            r = r * 10 % self.p;
        }
        if r != 0 {
            return false;
        }
        let lo_ok = side
            .lo
            .as_ref()
            .is_none_or(|b| cmp_of(st.lo, b) != Cmp::Less);
        let hi_ok = side
            .hi
            .as_ref()
            .is_none_or(|b| cmp_of(st.hi, b) != Cmp::Greater);
        lo_ok && hi_ok
    }

    /// The first state of a side, or dead.
    fn sign_state(&self, neg: bool, phase: Phase) -> St {
        if self.side(neg).is_none() {
            return DEAD;
        }
        St {
            phase,
            neg,
            len: 0,
            lo: Cmp::Eq,
            hi: Cmp::Eq,
            r: 0,
        }
    }

    fn next(&self, st: &St, letter: usize) -> St {
        if st.phase == Phase::Start && letter == 11 {
            return self.sign_state(true, Phase::Sign);
        }
        let Some(side) = self.side(st.neg) else {
            return DEAD;
        };
        let digit = (letter < 10).then_some(letter as u8);
        // The lexical comparison of the digit at integer position `pos`.
        let int_step = |flag: Cmp, pos: u32, d: u8, b: &Option<Mag>| -> Cmp {
            match b {
                None => Cmp::Eq,
                Some(b) => match b.int.get(pos as usize) {
                    None => Cmp::Greater,
                    Some(&bd) if flag == Cmp::Eq => cmp_digit(b'0' + d, bd),
                    Some(_) => flag,
                },
            }
        };
        let frac_step = |flag: Cmp, pos: u32, d: u8, b: &Option<Mag>| -> Cmp {
            match b {
                None => Cmp::Eq,
                Some(b) => match b.frac.get(pos as usize) {
                    Some(&bd) if flag == Cmp::Eq => cmp_digit(b'0' + d, bd),
                    _ => flag,
                },
            }
        };
        match (st.phase, digit, letter) {
            (Phase::Start | Phase::Sign, Some(d), _) => {
                let base = if st.phase == Phase::Start {
                    self.sign_state(false, Phase::Start)
                } else {
                    *st
                };
                if base.phase == Phase::Dead {
                    return DEAD;
                }
                St {
                    phase: if d == 0 { Phase::Zero } else { Phase::Int },
                    neg: base.neg,
                    len: 1,
                    lo: int_step(Cmp::Eq, 0, d, &side_of(self, base.neg).lo),
                    hi: int_step(Cmp::Eq, 0, d, &side_of(self, base.neg).hi),
                    r: u128::from(d) % self.p,
                }
            }
            (Phase::Int, Some(d), _) => St {
                phase: Phase::Int,
                neg: st.neg,
                len: (st.len + 1).min(self.cap),
                lo: int_step(st.lo, st.len, d, &side.lo),
                hi: int_step(st.hi, st.len, d, &side.hi),
                r: (st.r * 10 + u128::from(d)) % self.p,
            },
            (Phase::Int | Phase::Zero, None, 10) if !self.no_fraction => {
                let res = |flag: Cmp, b: &Option<Mag>| match b {
                    None => Cmp::Eq,
                    Some(b) => Spec::resolve_int(flag, st.len, b),
                };
                St {
                    phase: Phase::Dot,
                    neg: st.neg,
                    len: 0,
                    lo: res(st.lo, &side.lo),
                    hi: res(st.hi, &side.hi),
                    r: st.r,
                }
            }
            (Phase::Dot | Phase::Frac, Some(d), _) => {
                if st.len >= self.s {
                    return if d == 0 {
                        St {
                            phase: Phase::Frac,
                            ..*st
                        }
                    } else {
                        DEAD
                    };
                }
                if self.integer && d != 0 {
                    return DEAD;
                }
                St {
                    phase: Phase::Frac,
                    neg: st.neg,
                    len: st.len + 1,
                    lo: frac_step(st.lo, st.len, d, &side.lo),
                    hi: frac_step(st.hi, st.len, d, &side.hi),
                    r: (st.r * 10 + u128::from(d)) % self.p,
                }
            }
            _ => DEAD,
        }
    }
}

fn side_of(spec: &Spec, neg: bool) -> &Side {
    // Only called after `sign_state` checked the side exists.
    static NONE: Side = Side { lo: None, hi: None };
    spec.side(neg).unwrap_or(&NONE)
}

/// The regular expression of the JSON numbers without exponent that are
/// multiples of `p / 10^s` within all the bounds `lo` and `hi` (`integer`:
/// with no nonzero fraction digit; `no_fraction`: with no fraction at all,
/// draft 4 integers). `Ok(None)` when no number qualifies.
///
/// # Errors
/// A message (for the report) when the DFA or the regex would pass
/// [`MAX_DFA_STATES`] or [`MAX_PATTERN_BYTES`], or a bound is too large.
pub fn pattern(
    p: u128,
    s: u32,
    integer: bool,
    no_fraction: bool,
    lo: &[Bound],
    hi: &[Bound],
) -> Result<Option<String>, String> {
    match dfa(p, s, integer, no_fraction, lo, hi)? {
        Some(d) => regex_of(&d.0, &d.1),
        None => Ok(None),
    }
}

/// A multiple of `p / 10^s` that must (`within`: the step and bounds of a
/// [`pattern`]) or may be any number.
pub type Within<'a> = Option<(u128, u32, &'a [Bound], &'a [Bound])>;

/// The numbers without exponent (`integer`: the integers) that are not
/// multiples of `p / 10^s` — the form of `not: {multipleOf: …}` — and,
/// given `within`, are in that [`pattern`] (`multipleOf: 2` beside
/// `not: {multipleOf: 3}`).
///
/// # Errors
/// As [`pattern`].
pub fn not_pattern(
    p: u128,
    s: u32,
    integer: bool,
    no_fraction: bool,
    within: Within,
) -> Result<Option<String>, String> {
    let Some(not) = dfa(p, s, integer, no_fraction, &[], &[])? else {
        return Ok(None);
    };
    let inside = match within {
        Some((pa, sa, lo, hi)) => match dfa(pa, sa, integer, no_fraction, lo, hi)? {
            Some(d) => d,
            None => return Ok(None),
        },
        None => syntax(integer, no_fraction),
    };
    let (trans, accepts) = difference(&inside, &not);
    regex_of(&trans, &accepts)
}

/// A DFA over [`LETTERS`]: transitions (`state · LETTERS + letter`) and
/// accepting states; state 0 is dead, state 1 the start.
type Dfa = (Vec<u32>, Vec<bool>);

/// The DFA of [`pattern`]; `None` when the bounds leave no number.
fn dfa(
    p: u128,
    s: u32,
    integer: bool,
    no_fraction: bool,
    lo: &[Bound],
    hi: &[Bound],
) -> Result<Option<Dfa>, String> {
    let (nlo, nhi) = scaled_bounds(lo, hi, s)?;
    if let (Some(a), Some(b)) = (nlo, nhi) {
        if a > b {
            return Ok(None);
        }
    }
    // Nonnegative side: max(lo, 0) ≤ N ≤ hi; negative side (value -N):
    // max(-hi, 0) ≤ N ≤ -lo.
    let side = |lo: Option<i128>, hi: Option<i128>| -> Option<Side> {
        let lo = lo.map(|l| l.max(0));
        if let Some(h) = hi {
            if h < 0 || lo.is_some_and(|l| l > h) {
                return None;
            }
        }
        Some(Side {
            lo: lo.filter(|l| *l > 0).map(|l| Mag::new(l as u128, s)),
            hi: hi.map(|h| Mag::new(h as u128, s)),
        })
    };
    let pos = side(nlo, nhi);
    let neg = side(nhi.map(|h| -h), nlo.map(|l| -l));
    let cap = [&pos, &neg]
        .iter()
        .filter_map(|x| x.as_ref())
        .flat_map(|x| [&x.lo, &x.hi])
        .filter_map(|b| b.as_ref().map(|b| b.int.len() as u32 + 1))
        .max()
        .unwrap_or(1);
    let spec = Spec {
        p,
        s,
        integer,
        no_fraction,
        sides: [pos, neg],
        cap,
    };
    // Explore.
    let start_state = St {
        phase: Phase::Start,
        ..DEAD
    };
    let mut states = vec![DEAD, start_state];
    let mut index: std::collections::HashMap<St, u32> = states
        .iter()
        .enumerate()
        .map(|(i, s)| (*s, i as u32))
        .collect();
    let mut trans: Vec<u32> = Vec::new();
    let mut i = 0;
    while i < states.len() {
        let st = states[i];
        for letter in 0..LETTERS {
            let nx = if st.phase == Phase::Dead {
                DEAD
            } else {
                spec.next(&st, letter)
            };
            let nx = if nx.phase == Phase::Dead { DEAD } else { nx };
            let id = match index.get(&nx) {
                Some(&id) => id,
                None => {
                    if states.len() >= MAX_DFA_STATES {
                        return Err(format!(
                            "the step and bounds need more than {MAX_DFA_STATES} automaton states"
                        ));
                    }
                    states.push(nx);
                    index.insert(nx, states.len() as u32 - 1);
                    states.len() as u32 - 1
                }
            };
            trans.push(id);
        }
        i += 1;
    }
    let accepts: Vec<bool> = states.iter().map(|s| spec.accepts(s)).collect();
    Ok(Some((trans, accepts)))
}

/// The numbers without exponent (`integer`: integers; `no_fraction`:
/// without a fraction part) as a [`Dfa`].
fn syntax(integer: bool, no_fraction: bool) -> Dfa {
    // 0 dead, 1 start, 2 sign, 3 lone zero, 4 integer digits, 5 dot,
    // 6 fraction.
    let next = |q: u32, letter: usize| -> u32 {
        let digit = letter < 10;
        let zero_only = integer && letter != 0;
        match (q, letter) {
            (1, 11) => 2,
            (1 | 2, 0) => 3,
            (1 | 2, _) if digit => 4,
            (4, _) if digit => 4,
            (3 | 4, 10) if !no_fraction => 5,
            (5 | 6, _) if digit && !zero_only => 6,
            _ => 0,
        }
    };
    let trans = (0..7u32)
        .flat_map(|q| (0..LETTERS).map(move |a| next(q, a)))
        .collect();
    let accepts = (0..7).map(|q| matches!(q, 3 | 4 | 6)).collect();
    (trans, accepts)
}

/// The product DFA accepting what `a` accepts and `b` does not.
fn difference(a: &Dfa, b: &Dfa) -> Dfa {
    let mut states: Vec<(u32, u32)> = vec![(0, 0), (1, 1)];
    let mut index: std::collections::HashMap<(u32, u32), u32> =
        [((0, 0), 0), ((1, 1), 1)].into_iter().collect();
    let mut trans = Vec::new();
    let mut i = 0;
    while i < states.len() {
        let (x, y) = states[i];
        for letter in 0..LETTERS {
            let nx = a.0[x as usize * LETTERS + letter];
            // Once `a` is dead nothing is accepted: one dead state.
            let next = if nx == 0 {
                (0, 0)
            } else {
                (nx, b.0[y as usize * LETTERS + letter])
            };
            let id = *index.entry(next).or_insert_with(|| {
                states.push(next);
                states.len() as u32 - 1
            });
            trans.push(id);
        }
        i += 1;
    }
    let accepts = states
        .iter()
        .map(|&(x, y)| a.1[x as usize] && !b.1[y as usize])
        .collect();
    (trans, accepts)
}

/// The regular expression of the [`Dfa`] `trans`/`accepts`, minimised; `Ok(None)` when its language is empty.
fn regex_of(trans: &[u32], accepts: &[bool]) -> Result<Option<String>, String> {
    let n = accepts.len();
    let class: Vec<u32> = accepts.iter().map(|&a| u32::from(a)).collect();
    let block = hopcroft(n, LETTERS, trans, &class);
    let blocks = block.iter().map(|&b| b as usize + 1).max().unwrap_or(0);
    let mut btrans = vec![0u32; blocks * LETTERS];
    let mut baccept = vec![false; blocks];
    for s in 0..n {
        let b = block[s] as usize;
        baccept[b] = class[s] == 1;
        for a in 0..LETTERS {
            btrans[b * LETTERS + a] = block[trans[s * LETTERS + a] as usize];
        }
    }
    let start = block[1] as usize;
    // Live blocks: those reaching an accepting block.
    let mut live = baccept.clone();
    loop {
        let mut changed = false;
        for b in 0..blocks {
            if !live[b] && (0..LETTERS).any(|a| live[btrans[b * LETTERS + a] as usize]) {
                live[b] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if !live[start] {
        return Ok(None);
    }
    eliminate(blocks, &btrans, &baccept, &live, start).map(Some)
}

/// A regular expression under construction, with its rendered length.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Re {
    Eps,
    /// A literal or class: needs no brackets.
    Atom(String),
    Cat(Vec<Re>),
    Alt(Vec<Re>),
    Star(Box<Re>),
}

impl Re {
    fn len(&self) -> usize {
        match self {
            Re::Eps => 0,
            Re::Atom(a) => a.len(),
            Re::Cat(v) => v
                .iter()
                .map(|x| x.len() + if matches!(x, Re::Alt(_)) { 4 } else { 0 })
                .sum(),
            Re::Alt(v) => v.iter().map(Re::len).sum::<usize>() + v.len(),
            Re::Star(x) => x.len() + 5,
        }
    }

    fn cat(parts: Vec<Re>) -> Re {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Re::Eps => {}
                Re::Cat(v) => out.extend(v),
                x => out.push(x),
            }
        }
        match out.len() {
            0 => Re::Eps,
            1 => out.pop().unwrap_or(Re::Eps),
            _ => Re::Cat(out),
        }
    }

    fn alt(a: Re, b: Re) -> Re {
        let mut out = Vec::new();
        for x in [a, b] {
            match x {
                Re::Alt(v) => out.extend(v),
                x => out.push(x),
            }
        }
        let mut dedup: Vec<Re> = Vec::new();
        for x in out {
            if !dedup.contains(&x) {
                dedup.push(x);
            }
        }
        if dedup.len() == 1 {
            dedup.pop().unwrap_or(Re::Eps)
        } else {
            Re::Alt(dedup)
        }
    }

    fn star(x: Re) -> Re {
        match x {
            Re::Eps => Re::Eps,
            Re::Star(_) => x,
            x => Re::Star(Box::new(x)),
        }
    }

    fn render(&self, out: &mut String) {
        match self {
            Re::Eps => out.push_str("(?:)"),
            Re::Atom(a) => out.push_str(a),
            Re::Cat(v) => {
                for x in v {
                    if matches!(x, Re::Alt(_)) {
                        out.push_str("(?:");
                        x.render(out);
                        out.push(')');
                    } else {
                        x.render(out);
                    }
                }
            }
            Re::Alt(v) => {
                // An empty branch renders as `(?:)`.
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        out.push('|');
                    }
                    x.render(out);
                }
            }
            Re::Star(x) => {
                out.push_str("(?:");
                x.render(out);
                out.push_str(")*");
            }
        }
    }
}

/// The label of the letters `set` (bit `a`: letter `a`).
fn label(set: u16) -> Re {
    let digits: Vec<u8> = (0..10).filter(|d| set >> d & 1 == 1).collect();
    let mut alts = Vec::new();
    if !digits.is_empty() {
        let mut class = String::new();
        let mut i = 0;
        while i < digits.len() {
            let mut j = i;
            while j + 1 < digits.len() && digits[j + 1] == digits[j] + 1 {
                j += 1;
            }
            match j - i {
                0 => class.push((b'0' + digits[i]) as char),
                1 => {
                    class.push((b'0' + digits[i]) as char);
                    class.push((b'0' + digits[j]) as char);
                }
                _ => {
                    class.push((b'0' + digits[i]) as char);
                    class.push('-');
                    class.push((b'0' + digits[j]) as char);
                }
            }
            i = j + 1;
        }
        alts.push(Re::Atom(if digits.len() == 1 {
            class
        } else {
            format!("[{class}]")
        }));
    }
    if set >> 10 & 1 == 1 {
        alts.push(Re::Atom("\\.".into()));
    }
    if set >> 11 & 1 == 1 {
        alts.push(Re::Atom("-".into()));
    }
    alts.into_iter()
        .reduce(Re::alt)
        .unwrap_or(Re::Atom("[^\\x00-\\x{10FFFF}]".into()))
}

/// State elimination on the live part of a DFA.
fn eliminate(
    n: usize,
    trans: &[u32],
    accept: &[bool],
    live: &[bool],
    start: usize,
) -> Result<String, String> {
    use std::collections::BTreeMap;
    // Nodes 0..n are DFA states, n is the new initial, n+1 the new final.
    let (init, fin) = (n, n + 1);
    let mut edges: BTreeMap<(usize, usize), Re> = BTreeMap::new();
    for s in 0..n {
        if !live[s] {
            continue;
        }
        let mut by_target: BTreeMap<usize, u16> = BTreeMap::new();
        for a in 0..LETTERS {
            let t = trans[s * LETTERS + a] as usize;
            if live[t] {
                *by_target.entry(t).or_default() |= 1 << a;
            }
        }
        for (t, set) in by_target {
            edges.insert((s, t), label(set));
        }
        if accept[s] {
            edges.insert((s, fin), Re::Eps);
        }
    }
    edges.insert((init, start), Re::Eps);
    let mut remaining: Vec<usize> = (0..n).filter(|&s| live[s]).collect();
    while !remaining.is_empty() {
        // The state with the fewest in × out edges.
        let cost = |q: usize| {
            let ins = edges.keys().filter(|(a, b)| *b == q && *a != q).count();
            let outs = edges.keys().filter(|(a, b)| *a == q && *b != q).count();
            ins * outs
        };
        let (pos, &q) = remaining
            .iter()
            .enumerate()
            .min_by_key(|(_, &q)| cost(q))
            .ok_or("no state")?;
        remaining.swap_remove(pos);
        let loop_re = edges.remove(&(q, q)).map(Re::star).unwrap_or(Re::Eps);
        let ins: Vec<(usize, Re)> = edges
            .iter()
            .filter(|((_, b), _)| *b == q)
            .map(|((a, _), r)| (*a, r.clone()))
            .collect();
        let outs: Vec<(usize, Re)> = edges
            .iter()
            .filter(|((a, _), _)| *a == q)
            .map(|((_, b), r)| (*b, r.clone()))
            .collect();
        edges.retain(|(a, b), _| *a != q && *b != q);
        for (a, ra) in &ins {
            for (b, rb) in &outs {
                let path = Re::cat(vec![ra.clone(), loop_re.clone(), rb.clone()]);
                let e = match edges.remove(&(*a, *b)) {
                    Some(old) => Re::alt(old, path),
                    None => path,
                };
                if e.len() > MAX_PATTERN_BYTES {
                    return Err(format!(
                        "the regular expression would pass {MAX_PATTERN_BYTES} bytes"
                    ));
                }
                edges.insert((*a, *b), e);
            }
        }
    }
    let re = edges.remove(&(init, fin)).ok_or("empty language")?;
    let mut out = String::new();
    re.render(&mut out);
    if out.len() > MAX_PATTERN_BYTES {
        return Err(format!(
            "the regular expression would pass {MAX_PATTERN_BYTES} bytes"
        ));
    }
    Ok(format!("(?:{out})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn re(p: &str) -> regex::Regex {
        regex::Regex::new(&format!("^(?:{p})$")).expect("valid regex")
    }

    fn dec(s: &str) -> Decimal {
        Decimal::parse(s).expect("decimal")
    }

    #[test]
    fn decimals() {
        assert_eq!(
            dec("0.010"),
            Decimal {
                neg: false,
                mant: 1,
                exp: -2
            }
        );
        assert_eq!(dec("-1.5e3").mant, 15);
        assert_eq!(dec("-1.5e3").exp, 2);
        assert!(!dec("-0.0").neg);
        assert_eq!(step(dec("0.01")), Ok((1, 2)));
        assert_eq!(step(dec("1.50")), Ok((15, 1)));
        assert_eq!(step(dec("1e2")), Ok((100, 0)));
        assert!(step(dec("0")).is_err() && step(dec("-2")).is_err());
        assert_eq!(scaled(dec("0.333"), 2, true), Some(34));
        assert_eq!(scaled(dec("0.333"), 2, false), Some(33));
        assert_eq!(scaled(dec("-0.333"), 2, true), Some(-33));
        assert_eq!(scaled(dec("-0.333"), 2, false), Some(-34));
        assert_eq!(scaled(dec("1e-50"), 2, true), Some(1));
        assert_eq!(scaled(dec("1e-50"), 2, false), Some(0));
        let lcm = |a: serde_json::Value, b: serde_json::Value| lcm_value(&a, &b);
        assert_eq!(lcm(2.into(), 3.into()), Some(6.into()));
        assert_eq!(lcm(4.into(), 6.into()), Some(12.into()));
        assert_eq!(
            lcm(serde_json::json!(0.5), serde_json::json!(0.2)),
            Some(1.into())
        );
        assert_eq!(
            lcm(serde_json::json!(0.25), serde_json::json!(0.1)),
            Some(serde_json::json!(0.5))
        );
        assert_eq!(lcm(serde_json::json!(1.5), 2.into()), Some(6.into()));
        assert_eq!(lcm("a".into(), 2.into()), None);
    }

    /// Exact check of a number text without exponent: `N = value·10^s`
    /// integer, divisible by `p`, within `lo..=hi` (on N).
    fn oracle(
        text: &str,
        p: u128,
        s: u32,
        integer: bool,
        lo: Option<i128>,
        hi: Option<i128>,
    ) -> bool {
        static JSON: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let json = JSON.get_or_init(|| {
            regex::Regex::new(r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$").expect("valid regex")
        });
        if !json.is_match(text) {
            return false;
        }
        let Some(d) = Decimal::parse(text) else {
            return false;
        };
        if integer && d.exp < 0 {
            return false;
        }
        let e = d.exp + s as i32;
        if e < 0 {
            return false;
        }
        let n = d.mant as i128 * 10i128.pow(e as u32);
        let n = if d.neg { -n } else { n };
        n % p as i128 == 0 && lo.is_none_or(|l| n >= l) && hi.is_none_or(|h| n <= h)
    }

    fn texts() -> Vec<String> {
        let mut v = Vec::new();
        for i in -1200i64..1200 {
            v.push(i.to_string());
            for f in [
                "0", "00", "5", "05", "50", "25", "1", "10", "001", "3", "75", "333",
            ] {
                v.push(format!("{}{}.{f}", if i < 0 { "-" } else { "" }, i.abs()));
            }
        }
        for bad in ["-0", "-0.0", "01", "1.", ".5", "-", "", "1e2", "+1", "-00"] {
            v.push(bad.to_string());
        }
        v
    }

    #[test]
    fn brute_force_steps_and_bounds() {
        let texts = texts();
        let steps = [
            "1", "2", "3", "5", "10", "100", "0.5", "0.01", "0.25", "1.5", "0.1", "4",
        ];
        let bounds: [Option<(&str, bool)>; 8] = [
            None,
            Some(("0", false)),
            Some(("0", true)),
            Some(("-7", false)),
            Some(("12.5", false)),
            Some(("0.333", true)),
            Some(("250", false)),
            Some(("-100.25", true)),
        ];
        let mut checked = 0;
        for st in steps {
            let (p, s) = step(dec(st)).unwrap();
            for integer in [false, true] {
                for lo in bounds {
                    for hi in bounds {
                        let lo_b = lo.map(|(v, ex)| (dec(v), ex));
                        let hi_b = hi.map(|(v, ex)| (dec(v), ex));
                        let lo_b: Vec<Bound> = lo_b.into_iter().collect();
                        let hi_b: Vec<Bound> = hi_b.into_iter().collect();
                        let (nlo, nhi) = scaled_bounds(&lo_b, &hi_b, s).unwrap();
                        let pat = pattern(p, s, integer, false, &lo_b, &hi_b)
                            .unwrap_or_else(|e| panic!("{st} {lo:?} {hi:?}: {e}"));
                        let m = pat.as_deref().map(re);
                        for t in &texts {
                            let want = oracle(t, p, s, integer, nlo, nhi);
                            let got = m.as_ref().is_some_and(|m| m.is_match(t));
                            assert_eq!(
                                got, want,
                                "{t} step {st} int {integer} {lo:?} {hi:?}: {pat:?}"
                            );
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1_000_000);
    }

    /// `not_pattern` accepts exactly the numbers (integers) without
    /// exponent that `pattern` without bounds rejects.
    #[test]
    fn brute_force_complements() {
        static JSON: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
        let json = JSON.get_or_init(|| {
            regex::Regex::new(r"^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?$").expect("valid regex")
        });
        let texts = texts();
        let mut checked = 0;
        for st in ["1", "2", "3", "5", "10", "0.5", "0.01", "1.5", "4"] {
            let (p, s) = step(dec(st)).unwrap();
            for (integer, no_fraction) in [(false, false), (true, false), (true, true)] {
                let not = not_pattern(p, s, integer, no_fraction, None).unwrap();
                let m = not.as_deref().map(re);
                for t in &texts {
                    let number = json.is_match(t)
                        && (!integer || Decimal::parse(t).is_some_and(|d| d.exp >= 0))
                        && (!no_fraction || !t.contains('.'));
                    let want = number && !oracle(t, p, s, integer, None, None);
                    let got = m.as_ref().is_some_and(|m| m.is_match(t));
                    assert_eq!(got, want, "{t} not multipleOf {st} int {integer}: {not:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 100_000);
        // Within another step and bounds: multiples of 2 in [-7, 250]
        // that are not multiples of 3.
        let (lo, hi) = ([(dec("-7"), false)], [(dec("250"), false)]);
        let (p2, s2) = step(dec("2")).unwrap();
        let (p3, s3) = step(dec("3")).unwrap();
        let both = not_pattern(p3, s3, false, false, Some((p2, s2, &lo, &hi))).unwrap();
        let m = re(both.as_deref().unwrap());
        for t in &texts {
            let want = oracle(t, p2, s2, false, Some(-7), Some(250))
                && !oracle(t, p3, s3, false, None, None);
            assert_eq!(m.is_match(t), want, "{t}");
        }
    }

    #[test]
    fn pattern_sizes() {
        // `Some(true)`: must fit; `Some(false)`: must be refused; `None`:
        // either (printed).
        let cases = [
            ("2", Some(true)),
            ("3", Some(true)),
            ("4", Some(true)),
            ("5", Some(true)),
            ("10", Some(true)),
            ("100", Some(true)),
            ("0.01", Some(true)),
            ("0.5", Some(true)),
            ("0.25", Some(true)),
            ("6", None),
            ("9", None),
            ("1.5", None),
            ("15", None),
            ("7", Some(false)),
            ("11", Some(false)),
        ];
        for (st, small) in cases {
            let (p, s) = step(dec(st)).unwrap();
            match pattern(p, s, false, false, &[], &[]) {
                Ok(Some(pat)) => {
                    println!("multipleOf {st}: {} bytes", pat.len());
                    assert_ne!(small, Some(false), "{st}: {} bytes", pat.len());
                }
                Ok(None) => panic!("{st}: empty"),
                Err(e) => {
                    println!("multipleOf {st}: {e}");
                    assert_ne!(small, Some(true), "{st}: {e}");
                }
            }
        }
    }
}
