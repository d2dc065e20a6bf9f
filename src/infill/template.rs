//! Templates: fixed chunks with regions to fill, `c0 R1 c1 R2 … Rn cn`.

use crate::error::{Error, ErrorKind, Result};
use crate::partial::{Partial, Segment};

/// A template of `n` regions between `n + 1` fixed chunks (any chunk may be
/// empty, so two regions may be adjacent; each stays its own region with its
/// own fill).
///
/// # Example
/// ```
/// use cdiff::infill::Template;
/// let t = Template::from_marked(b"int f() { <FILL> }", b"<FILL>")?;
/// assert_eq!(t.n_regions(), 1);
/// assert_eq!(t.fill(&[b"return 1;".to_vec()]), b"int f() { return 1; }");
/// # Ok::<(), cdiff::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    chunks: Vec<Vec<u8>>,
}

fn template_err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Partial, msg)
}

impl Template {
    /// A template from its chunks: `chunks.len() - 1` regions.
    ///
    /// # Errors
    /// [`ErrorKind::Partial`] when there are fewer than two chunks (no region).
    pub fn new(chunks: Vec<Vec<u8>>) -> Result<Template> {
        if chunks.len() < 2 {
            return Err(template_err(
                "the template has no region to fill (use `cdiff check` to judge a complete text)",
            ));
        }
        Ok(Template { chunks })
    }

    /// The same template with `prefix` before its first chunk.
    ///
    /// ```
    /// use cdiff::infill::Template;
    /// let t = Template::from_marked(b"f(<FILL>)", b"<FILL>")?.with_prefix(b"// f\n");
    /// assert_eq!(t.fill(&[b"1".to_vec()]), b"// f\nf(1)");
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    pub fn with_prefix(mut self, prefix: &[u8]) -> Template {
        if let Some(first) = self.chunks.first_mut() {
            first.splice(0..0, prefix.iter().copied());
        }
        self
    }

    /// Parses the partial-output JSON of `cdiff check`: an array of strings
    /// and nulls, each `null` one region (adjacent nulls are separate
    /// regions, consecutive strings join).
    ///
    /// ```
    /// let t = cdiff::infill::Template::from_json(r#"["a", null, null, "b"]"#)?;
    /// assert_eq!(t.n_regions(), 2);
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Partial`]: not JSON, not an array of strings and nulls,
    /// or no `null`.
    pub fn from_json(text: &str) -> Result<Template> {
        let v: serde_json::Value = crate::jsontext::parse(text)
            .map_err(|e| template_err(format!("the template is not valid JSON: {e}")))?;
        let arr = v.as_array().ok_or_else(|| {
            template_err("a template must be a JSON array of strings and nulls (null = a region)")
        })?;
        let mut chunks = vec![Vec::new()];
        for (i, item) in arr.iter().enumerate() {
            match item {
                serde_json::Value::String(s) => {
                    if let Some(last) = chunks.last_mut() {
                        last.extend_from_slice(s.as_bytes());
                    }
                }
                serde_json::Value::Null => chunks.push(Vec::new()),
                other => {
                    return Err(template_err(format!(
                        "template item {i} is {other}, expected a string or null"
                    )))
                }
            }
        }
        Template::new(chunks)
    }

    /// Splits `text` at every occurrence of `marker`: each one is a region.
    ///
    /// # Errors
    /// [`ErrorKind::Partial`]: an empty marker, or one that never occurs.
    pub fn from_marked(text: &[u8], marker: &[u8]) -> Result<Template> {
        if marker.is_empty() {
            return Err(template_err("the hole marker is empty"));
        }
        let mut chunks = Vec::new();
        let mut start = 0;
        let mut i = 0;
        while i + marker.len() <= text.len() {
            if &text[i..i + marker.len()] == marker {
                chunks.push(text[start..i].to_vec());
                i += marker.len();
                start = i;
            } else {
                i += 1;
            }
        }
        chunks.push(text[start..].to_vec());
        if chunks.len() < 2 {
            return Err(template_err(format!(
                "the hole marker {:?} does not occur in the template",
                String::from_utf8_lossy(marker)
            )));
        }
        Template::new(chunks)
    }

    /// Number of regions.
    pub fn n_regions(&self) -> usize {
        self.chunks.len() - 1
    }

    /// The fixed chunks, `n_regions() + 1` of them.
    pub fn chunks(&self) -> &[Vec<u8>] {
        &self.chunks
    }

    /// The text with region `i` filled by `fills[i]` (missing fills empty).
    pub fn fill(&self, fills: &[Vec<u8>]) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, c) in self.chunks.iter().enumerate() {
            if i > 0 {
                out.extend_from_slice(fills.get(i - 1).map_or(&[][..], |f| f.as_slice()));
            }
            out.extend_from_slice(c);
        }
        out
    }

    /// The partial output while region `region` is being written: regions
    /// before it hold `done`, region `region` holds `current` and then, if
    /// `open`, a hole; later regions are holes.
    pub fn partial_at(
        &self,
        done: &[Vec<u8>],
        region: usize,
        current: &[u8],
        open: bool,
    ) -> Partial {
        self.partial_with_holes(done, region, current, open).0
    }

    /// As [`Template::partial_at`], with, for each region, the index of the
    /// hole of the partial it opens: `None` for a closed region and for one
    /// whose hole merged with the previous region's (an empty chunk between
    /// them; the merged hole's fill then belongs to the first of them).
    pub fn partial_with_holes(
        &self,
        done: &[Vec<u8>],
        region: usize,
        current: &[u8],
        open: bool,
    ) -> (Partial, Vec<Option<usize>>) {
        let mut p = Partial::new().text(&self.chunks[0]);
        let mut holes = Vec::with_capacity(self.n_regions());
        let mut n_holes = 0;
        let mut push_hole = |p: &mut Partial| {
            if p.segments().last() == Some(&Segment::Hole) {
                None
            } else {
                p.push_hole();
                n_holes += 1;
                Some(n_holes - 1)
            }
        };
        for r in 0..self.n_regions() {
            if r < region {
                p.push_text(done.get(r).map_or(&[][..], |f| f.as_slice()));
                holes.push(None);
            } else if r == region {
                p.push_text(current);
                holes.push(if open { push_hole(&mut p) } else { None });
            } else {
                holes.push(push_hole(&mut p));
            }
            p.push_text(&self.chunks[r + 1]);
        }
        (p, holes)
    }

    /// The partial output with every region a hole.
    pub fn partial(&self) -> Partial {
        self.partial_at(&[], 0, b"", true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_splits_and_keeps_adjacent_regions() {
        let t = Template::from_marked(b"<F><F>x<F>", b"<F>").unwrap();
        assert_eq!(
            t.chunks(),
            &[b"".to_vec(), b"".to_vec(), b"x".to_vec(), b"".to_vec()]
        );
        assert_eq!(
            t.fill(&[b"1".to_vec(), b"2".to_vec(), b"3".to_vec()]),
            b"12x3"
        );
    }

    #[test]
    fn no_region_is_an_error() {
        assert!(Template::from_json(r#"["abc"]"#).is_err());
        assert!(Template::from_marked(b"abc", b"<F>").is_err());
        assert!(Template::from_json(r#"[1]"#).is_err());
    }

    #[test]
    fn partial_at_opens_only_the_current_and_later_regions() {
        let t = Template::from_json(r#"["a", null, "b", null, "c"]"#).unwrap();
        let p = t.partial_at(&[b"X".to_vec()], 1, b"Y", true);
        assert_eq!(p, Partial::new().text("aXbY").hole().text("c"));
        let p = t.partial_at(&[], 0, b"Y", false);
        assert_eq!(p, Partial::new().text("aYb").hole().text("c"));
    }
}
