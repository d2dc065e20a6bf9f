//! Partial outputs: text chunks with holes, `x1 □ x2 □ … □ xn`.

use crate::error::{Error, ErrorKind, Result};

/// One piece of a [`Partial`]: fixed bytes or a hole to be filled.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Fixed bytes (never empty inside a `Partial`).
    Text(Vec<u8>),
    /// A hole: any byte string (possibly empty) may stand here.
    Hole,
}

/// A partial output: fixed chunks and holes.
///
/// Adjacent texts are joined and adjacent holes merged (two holes side by side
/// are one hole), so the representation is canonical. A leading hole is a hole
/// at the start; a trailing hole is an *open end* (the text may go on); without
/// one, the text ends after the last chunk.
///
/// # Example
/// ```
/// use cdiff::Partial;
/// let p = Partial::new().text("int ").hole().text("() {").hole().text(" 2; }");
/// assert_eq!(p.n_holes(), 2);
/// assert_eq!(p.fill(&[b"f".to_vec(), b" return".to_vec()]).unwrap(), b"int f() { return 2; }");
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Partial {
    segments: Vec<Segment>,
}

impl Partial {
    /// The empty partial output (the empty text, no holes).
    pub fn new() -> Partial {
        Partial::default()
    }

    /// Appends fixed bytes (builder style).
    pub fn text(mut self, bytes: impl AsRef<[u8]>) -> Partial {
        self.push_text(bytes);
        self
    }

    /// Appends a hole (builder style).
    pub fn hole(mut self) -> Partial {
        self.push_hole();
        self
    }

    /// Appends fixed bytes.
    pub fn push_text(&mut self, bytes: impl AsRef<[u8]>) {
        let bytes = bytes.as_ref();
        if bytes.is_empty() {
            return;
        }
        match self.segments.last_mut() {
            Some(Segment::Text(t)) => t.extend_from_slice(bytes),
            _ => self.segments.push(Segment::Text(bytes.to_vec())),
        }
    }

    /// Appends a hole.
    pub fn push_hole(&mut self) {
        if self.segments.last() != Some(&Segment::Hole) {
            self.segments.push(Segment::Hole);
        }
    }

    /// Appends every segment of `other` (texts joined, holes merged).
    ///
    /// ```
    /// use cdiff::Partial;
    /// let mut p = Partial::new().text("[1").hole();
    /// p.append(&Partial::new().hole().text("]"));
    /// assert_eq!(p, Partial::new().text("[1").hole().text("]"));
    /// ```
    pub fn append(&mut self, other: &Partial) {
        for s in &other.segments {
            match s {
                Segment::Text(t) => self.push_text(t),
                Segment::Hole => self.push_hole(),
            }
        }
    }

    /// Splits at layout position `at` (each byte and each hole is one
    /// position): the first part has the first `at` positions (all of them
    /// if there are fewer). Appending the second part to the first gives
    /// `self` back.
    ///
    /// ```
    /// use cdiff::Partial;
    /// let p = Partial::new().text("ab").hole().text("cd");
    /// let (l, r) = p.split_at(3);
    /// assert_eq!((l, r), (Partial::new().text("ab").hole(), Partial::new().text("cd")));
    /// ```
    pub fn split_at(&self, at: usize) -> (Partial, Partial) {
        let (mut left, mut right) = (Partial::new(), Partial::new());
        let mut n = 0;
        for s in &self.segments {
            match s {
                Segment::Hole if n < at => {
                    left.push_hole();
                    n += 1;
                }
                Segment::Hole => right.push_hole(),
                Segment::Text(t) => {
                    let k = at.saturating_sub(n).min(t.len());
                    left.push_text(&t[..k]);
                    right.push_text(&t[k..]);
                    n += k;
                }
            }
        }
        (left, right)
    }

    /// A partial output without holes.
    pub fn complete(bytes: impl AsRef<[u8]>) -> Partial {
        Partial::new().text(bytes)
    }

    /// `text` with each span `[start, end)` replaced by a hole (spans sorted
    /// and disjoint; out-of-range parts are ignored).
    ///
    /// ```
    /// let p = cdiff::Partial::cut(b"abcdef", &[(1, 2), (4, 5)]);
    /// assert_eq!(p.fill(&[b"B".to_vec(), b"E".to_vec()]).unwrap(), b"aBcdEf");
    /// ```
    pub fn cut(text: &[u8], spans: &[(usize, usize)]) -> Partial {
        let mut p = Partial::new();
        let mut pos = 0;
        for &(s, e) in spans {
            p.push_text(text.get(pos..s).unwrap_or_default());
            p.push_hole();
            pos = e.max(pos);
        }
        p.push_text(text.get(pos..).unwrap_or_default());
        p
    }

    /// Parses the CLI's JSON form: an array of strings and nulls, null = hole.
    ///
    /// ```
    /// let p = cdiff::Partial::from_json(r#"["[1, ", null, "]"]"#).unwrap();
    /// assert_eq!(p.n_holes(), 1);
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Partial`] if the text is not such an array.
    pub fn from_json(text: &str) -> Result<Partial> {
        let v: serde_json::Value = crate::jsontext::parse(text)
            .map_err(|e| Error::new(ErrorKind::Partial, format!("invalid JSON: {e}")))?;
        Partial::from_json_value(&v)
    }

    /// As [`Partial::from_json`], from a parsed value.
    ///
    /// # Errors
    /// [`ErrorKind::Partial`] if `v` is not an array of strings and nulls.
    pub fn from_json_value(v: &serde_json::Value) -> Result<Partial> {
        Partial::from_json_nulls(v).map(|(p, _)| p)
    }

    /// As [`Partial::from_json_value`], with the hole each `null` became:
    /// adjacent nulls share one hole (two holes side by side are one), so
    /// give the fills back per `null` with [`Partial::fills_per_null`].
    ///
    /// ```
    /// let v = serde_json::json!(["[", null, null, "]"]);
    /// let (p, holes) = cdiff::Partial::from_json_nulls(&v)?;
    /// assert_eq!((p.n_holes(), holes), (1, vec![0, 0]));
    /// let per_null = cdiff::Partial::fills_per_null(&[0, 0], &[b"1, 2".to_vec()]);
    /// assert_eq!(per_null, vec![b"1, 2".to_vec(), Vec::new()]);
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Partial`] if `v` is not an array of strings and nulls.
    pub fn from_json_nulls(v: &serde_json::Value) -> Result<(Partial, Vec<usize>)> {
        let arr = v.as_array().ok_or_else(|| {
            Error::new(
                ErrorKind::Partial,
                "a partial output must be a JSON array of strings and nulls",
            )
        })?;
        let mut p = Partial::new();
        let mut nulls = Vec::new();
        for (i, item) in arr.iter().enumerate() {
            match item {
                serde_json::Value::Null => {
                    p.push_hole();
                    nulls.push(p.n_holes() - 1);
                }
                serde_json::Value::String(s) => p.push_text(s),
                other => {
                    return Err(Error::new(
                        ErrorKind::Partial,
                        format!(
                        "element {i} of the partial output is {other}, expected a string or null"
                    ),
                    ))
                }
            }
        }
        Ok((p, nulls))
    }

    /// One fill per `null` of a JSON partial output from one fill per hole:
    /// `nulls[k]` is the hole of the `k`-th null ([`Partial::from_json_nulls`]);
    /// the first null of a hole gets its fill, the others the empty string.
    pub fn fills_per_null(nulls: &[usize], fills: &[Vec<u8>]) -> Vec<Vec<u8>> {
        let mut prev = None;
        nulls
            .iter()
            .map(|&h| {
                let first = prev != Some(h);
                prev = Some(h);
                match fills.get(h) {
                    Some(f) if first => f.clone(),
                    _ => Vec::new(),
                }
            })
            .collect()
    }

    /// The canonical segments.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Number of holes.
    pub fn n_holes(&self) -> usize {
        self.segments
            .iter()
            .filter(|s| matches!(s, Segment::Hole))
            .count()
    }

    /// Total number of fixed bytes.
    pub fn text_len(&self) -> usize {
        self.segments
            .iter()
            .map(|s| if let Segment::Text(t) = s { t.len() } else { 0 })
            .sum()
    }

    /// The text obtained by putting `fills[i]` into hole `i`.
    ///
    /// # Errors
    /// [`ErrorKind::Partial`] if the number of fills differs from the number of holes.
    pub fn fill(&self, fills: &[Vec<u8>]) -> Result<Vec<u8>> {
        if fills.len() != self.n_holes() {
            return Err(Error::new(
                ErrorKind::Partial,
                format!("{} fills given for {} holes", fills.len(), self.n_holes()),
            ));
        }
        let mut out = Vec::new();
        let mut it = fills.iter();
        for s in &self.segments {
            match s {
                Segment::Text(t) => out.extend_from_slice(t),
                Segment::Hole => out.extend_from_slice(it.next().map_or(&[][..], |f| f.as_slice())),
            }
        }
        Ok(out)
    }
}
