//! From a canvas of token ids to the partial output the constraint judges.
//!
//! A canvas is `prompt ++ answer`; each answer position holds a committed
//! token id or the mask id. The *constrained text* is
//! `prefill ++ body(answer)`, where `prefill` is given by the caller (e.g. a
//! C++ signature already in the prompt) and `body` is built as follows.
//!
//! 1. **Bytes and holes.** Walking the answer, a committed ordinary token
//!    contributes [`TextCodec::token_bytes`]; each maximal run of masks is one
//!    hole (runs separated only by tokens with no bytes merge, as in
//!    [`Partial`]).
//! 2. **End of text.** The first committed EOS or pad ends the text. Every
//!    later position must be EOS, pad or a mask (a mask there can only become
//!    EOS/pad and is *not* a hole); a later ordinary token makes the canvas
//!    invalid ([`Layout::view`] returns `None`). Without a committed EOS/pad,
//!    the text ends after the last answer position; if that position is a
//!    mask the partial ends with a hole — an open end, since the model may
//!    still write anything there, EOS included. (A trailing hole and an open
//!    end are the same language in [`Partial`].)
//! 3. **Fence** (`fence = Some(lang)`). The answer must open with
//!    ```` ```lang\n ```` as committed bytes before the first hole (the decoder
//!    writes these tokens itself, so any other canvas is invalid); they are
//!    removed. At the end, when the text is closed (no trailing hole), a
//!    closing fence `"\n```\n"` or `"\n```"` at the very end of the text is
//!    removed (the longer first). If the bytes after the last hole are a
//!    proper suffix of one of these closers, the hole may contain the start
//!    of the closer, so the constrained partial ends with that hole: the set
//!    of bodies is then exactly "anything after the previous text", which is
//!    what a trailing hole denotes. Nothing but EOS/pad may follow a closing
//!    fence; any other trailing text belongs to the body.
//!
//! 4. **Regions** (infilling, `regions` not empty). The answer holds fixed
//!    template tokens outside the regions and a run of positions per region.
//!    Inside a region the first committed EOS/pad ends that region's text:
//!    later positions of the region may only be EOS, pad or masks (which are
//!    then not holes). Masks before it are holes. Outside the regions every
//!    token contributes its bytes. There is no fence and no global end.
//!
//! Cost: one pass over the answer, `O(answer tokens + bytes)`.

use std::ops::Range;

use crate::model::{SpecialTokens, TextCodec};
use crate::partial::{Partial, Segment};

/// The closing fences accepted at the end of a fenced answer, longest first.
pub const FENCE_CLOSERS: [&[u8]; 2] = [b"\n```\n", b"\n```"];

/// How an answer maps to constrained text.
#[derive(Clone, Copy, Debug)]
pub struct Layout<'a> {
    /// Special ids (mask, EOS, pad).
    pub special: &'a SpecialTokens,
    /// Bytes of the constrained text that precede the answer.
    pub prefill: &'a [u8],
    /// The Markdown fence language, if the answer is fenced.
    pub fence: Option<&'a str>,
    /// Infilling regions (answer positions), sorted and disjoint; empty for
    /// an ordinary answer. See "Regions" in the module docs.
    pub regions: &'a [Range<usize>],
}

/// The partial output of a canvas, with where its holes are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerView {
    /// The constrained text with holes.
    pub partial: Partial,
    /// The answer positions of each mask run before the end of text, in
    /// order. Usually one per hole of `partial` (not when runs merged).
    pub runs: Vec<Range<usize>>,
    /// Answer index of the first committed EOS/pad, if any (ordinary
    /// answers only).
    pub end: Option<usize>,
    /// For each run, the index of the hole of `partial` it belongs to.
    pub run_holes: Vec<usize>,
}

impl AnswerView {
    /// The most bytes each hole of [`AnswerView::partial`] can receive when
    /// a token stands for at most `max_token_bytes` bytes: its masks times
    /// that (`None` when that is unknown — `usize::MAX`, the default of
    /// [`TextCodec::max_token_bytes`] — or overflows, or the hole has no
    /// mask run).
    ///
    /// ```
    /// use cdiff::decode::canvas::AnswerView;
    /// use cdiff::Partial;
    /// let v = AnswerView {
    ///     partial: Partial::new().text("C6").hole().text("))").hole(),
    ///     runs: vec![2..3, 5..9],
    ///     end: None,
    ///     run_holes: vec![0, 1],
    /// };
    /// assert_eq!(v.hole_limits(1), vec![Some(1), Some(4)]);
    /// assert_eq!(v.hole_limits(usize::MAX), vec![None, None]);
    /// ```
    pub fn hole_limits(&self, max_token_bytes: usize) -> Vec<Option<usize>> {
        let mut masks = vec![0usize; self.partial.n_holes()];
        for (run, &h) in self.runs.iter().zip(&self.run_holes) {
            if let Some(m) = masks.get_mut(h) {
                *m += run.len();
            }
        }
        masks
            .into_iter()
            .map(|m| {
                let known = m > 0 && max_token_bytes != usize::MAX;
                known.then(|| m.checked_mul(max_token_bytes)).flatten()
            })
            .collect()
    }
}

enum Piece {
    Bytes(Vec<u8>),
    Hole,
}

impl<'a> Layout<'a> {
    /// The opening fence bytes, ```` ```lang\n ````, if fenced.
    pub fn fence_open(&self) -> Option<Vec<u8>> {
        self.fence.map(|f| format!("```{f}\n").into_bytes())
    }

    fn is_end(&self, id: u32) -> bool {
        id == self.special.eos || id == self.special.pad
    }

    /// Index of the first committed EOS/pad of `answer`.
    pub fn end_of_text(&self, answer: &[u32]) -> Option<usize> {
        answer.iter().position(|&t| self.is_end(t))
    }

    /// The partial output of `answer` (see the module docs), or `None` when
    /// no completion of the canvas can be well formed (an ordinary token after
    /// EOS, a missing opening fence).
    pub fn view(&self, codec: &dyn TextCodec, answer: &[u32]) -> Option<AnswerView> {
        if !self.regions.is_empty() {
            return self.view_regions(codec, answer);
        }
        let mask = self.special.mask;
        let end = self.end_of_text(answer);
        let stop = end.unwrap_or(answer.len());
        if answer[stop..].iter().any(|&t| t != mask && !self.is_end(t)) {
            return None;
        }
        let mut pieces: Vec<Piece> = Vec::new();
        let mut runs: Vec<Range<usize>> = Vec::new();
        for (i, &t) in answer[..stop].iter().enumerate() {
            if t == mask {
                match runs.last_mut() {
                    Some(r) if r.end == i => r.end = i + 1,
                    _ => {
                        runs.push(i..i + 1);
                        pieces.push(Piece::Hole);
                    }
                }
            } else {
                let b = codec.token_bytes(t);
                if b.is_empty() {
                    continue;
                }
                match pieces.last_mut() {
                    Some(Piece::Bytes(v)) => v.extend_from_slice(b),
                    _ => pieces.push(Piece::Bytes(b.to_vec())),
                }
            }
        }
        if let Some(open) = self.fence_open() {
            match pieces.first_mut() {
                Some(Piece::Bytes(v)) if v.starts_with(&open) => {
                    v.drain(..open.len());
                }
                _ => return None,
            }
        }
        let open_end = matches!(pieces.last(), Some(Piece::Hole));
        if self.fence.is_some() && !open_end {
            let hole_before = pieces.iter().any(|p| matches!(p, Piece::Hole));
            if let Some(Piece::Bytes(t)) = pieces.last_mut() {
                if let Some(c) = FENCE_CLOSERS.iter().find(|c| t.ends_with(c)) {
                    t.truncate(t.len() - c.len());
                } else if hole_before
                    && !t.is_empty()
                    && FENCE_CLOSERS.iter().any(|c| c.ends_with(t))
                {
                    pieces.pop();
                }
            }
        }
        let (partial, run_holes) = self.assemble(pieces, runs.len());
        Some(AnswerView {
            partial,
            runs,
            end,
            run_holes,
        })
    }

    /// The partial output of `pieces` after the prefill, and the hole index
    /// of each of the `n_runs` runs (one `Piece::Hole` per run, in order).
    fn assemble(&self, pieces: Vec<Piece>, n_runs: usize) -> (Partial, Vec<usize>) {
        let mut partial = Partial::new().text(self.prefill);
        let mut run_holes = Vec::with_capacity(n_runs);
        for p in pieces {
            match p {
                Piece::Bytes(b) => partial.push_text(b),
                Piece::Hole => {
                    partial.push_hole();
                    run_holes.push(partial.n_holes() - 1);
                }
            }
        }
        (partial, run_holes)
    }

    /// Where the bytes of an ordinary token at answer position `pos` start
    /// in the partial output of [`Layout::view`] (bytes and holes count one
    /// position each), when nothing before `pos` ends the text. Callers
    /// that split a view there must verify the split (the closing fence at
    /// the end of a text can move bytes).
    pub fn offset_of(&self, codec: &dyn TextCodec, answer: &[u32], pos: usize) -> usize {
        let mut before = Partial::new();
        for &t in &answer[..pos.min(answer.len())] {
            if t == self.special.mask {
                before.push_hole();
            } else {
                before.push_text(codec.token_bytes(t));
            }
        }
        let mut n = self.prefill.len() + before.text_len() + before.n_holes();
        if let (Some(open), Some(Segment::Text(first))) =
            (self.fence_open(), before.segments().first())
        {
            if first.starts_with(&open) {
                n -= open.len();
            }
        }
        n
    }

    /// The region containing answer position `pos`, if any.
    fn region_of(&self, pos: usize) -> Option<&Range<usize>> {
        let i = self.regions.partition_point(|r| r.end <= pos);
        self.regions.get(i).filter(|r| r.contains(&pos))
    }

    /// Whether answer position `pos` may only hold EOS/pad: it follows a
    /// committed EOS/pad (of its region, with regions).
    pub fn forced_end(&self, answer: &[u32], pos: usize) -> bool {
        if self.regions.is_empty() {
            return self.end_of_text(answer).is_some_and(|e| pos > e);
        }
        self.region_of(pos)
            .is_some_and(|r| answer[r.start..pos].iter().any(|&t| self.is_end(t)))
    }

    /// Whether the fill of `run` may be shorter than the run (padded with
    /// EOS): nothing but the end of the text (of its region) follows it.
    pub fn may_pad(&self, view: &AnswerView, k: usize, answer: &[u32]) -> bool {
        let run = &view.runs[k];
        if self.regions.is_empty() {
            return k + 1 == view.runs.len() && run.end == view.end.unwrap_or(answer.len());
        }
        self.region_of(run.start).is_some_and(|r| {
            run.end == r.end || answer.get(run.end).is_some_and(|&t| self.is_end(t))
        })
    }

    /// Answer index where the text of each position's region ends (the
    /// region's first EOS/pad, else its end).
    fn region_stop(&self, answer: &[u32], r: &Range<usize>) -> usize {
        answer[r.clone()]
            .iter()
            .position(|&t| self.is_end(t))
            .map_or(r.end, |i| r.start + i)
    }

    /// [`Layout::view`] with regions.
    fn view_regions(&self, codec: &dyn TextCodec, answer: &[u32]) -> Option<AnswerView> {
        let mask = self.special.mask;
        let mut pieces: Vec<Piece> = Vec::new();
        let mut runs: Vec<Range<usize>> = Vec::new();
        let push_bytes = |pieces: &mut Vec<Piece>, b: &[u8]| {
            if b.is_empty() {
                return;
            }
            match pieces.last_mut() {
                Some(Piece::Bytes(v)) => v.extend_from_slice(b),
                _ => pieces.push(Piece::Bytes(b.to_vec())),
            }
        };
        let mut pos = 0;
        for r in self.regions {
            for &t in &answer[pos..r.start] {
                if t == mask {
                    return None;
                }
                push_bytes(&mut pieces, codec.token_bytes(t));
            }
            let stop = self.region_stop(answer, r);
            if answer[stop..r.end]
                .iter()
                .any(|&t| t != mask && !self.is_end(t))
            {
                return None;
            }
            for (i, &t) in answer[r.start..stop].iter().enumerate() {
                let i = r.start + i;
                if t == mask {
                    match runs.last_mut() {
                        Some(run) if run.end == i && i != r.start => run.end = i + 1,
                        _ => {
                            runs.push(i..i + 1);
                            pieces.push(Piece::Hole);
                        }
                    }
                } else {
                    push_bytes(&mut pieces, codec.token_bytes(t));
                }
            }
            pos = r.end;
        }
        for &t in &answer[pos..] {
            if t == mask {
                return None;
            }
            push_bytes(&mut pieces, codec.token_bytes(t));
        }
        let (partial, run_holes) = self.assemble(pieces, runs.len());
        Some(AnswerView {
            partial,
            runs,
            end: None,
            run_holes,
        })
    }

    /// The text of each region of a canvas (committed bytes up to the
    /// region's first EOS/pad, masks skipped).
    pub fn region_texts(&self, codec: &dyn TextCodec, answer: &[u32]) -> Vec<Vec<u8>> {
        self.regions
            .iter()
            .map(|r| {
                let stop = self.region_stop(answer, r);
                answer[r.start..stop]
                    .iter()
                    .filter(|&&t| t != self.special.mask)
                    .flat_map(|&t| codec.token_bytes(t).iter().copied())
                    .collect()
            })
            .collect()
    }

    /// The fill of each region when the holes of `view` are filled with
    /// `fills` (one per hole of `view.partial`): the region's committed bytes
    /// with each run replaced by its hole's fill (a hole spanning several
    /// runs gives its whole fill to the first).
    pub fn region_fills(
        &self,
        codec: &dyn TextCodec,
        answer: &[u32],
        view: &AnswerView,
        fills: &[Vec<u8>],
    ) -> Vec<Vec<u8>> {
        let mut used = vec![false; fills.len()];
        self.regions
            .iter()
            .map(|r| {
                let stop = self.region_stop(answer, r);
                let mut out = Vec::new();
                for (p, &t) in answer.iter().enumerate().take(stop).skip(r.start) {
                    if t != self.special.mask {
                        out.extend_from_slice(codec.token_bytes(t));
                        continue;
                    }
                    let Some(k) = view.runs.iter().position(|run| run.start == p) else {
                        continue;
                    };
                    let h = view.run_holes[k];
                    if !std::mem::replace(&mut used[h], true) {
                        out.extend_from_slice(&fills[h]);
                    }
                }
                out
            })
            .collect()
    }

    /// The raw answer bytes as a reader sees them: committed tokens up to the
    /// first EOS/pad, masks skipped, later tokens ignored (this is how the
    /// authors' scripts decode: the text before the first EOS).
    pub fn answer_bytes(&self, codec: &dyn TextCodec, answer: &[u32]) -> Vec<u8> {
        if !self.regions.is_empty() {
            let mut out = Vec::new();
            let mut pos = 0;
            let texts = self.region_texts(codec, answer);
            for (r, text) in self.regions.iter().zip(texts) {
                for &t in &answer[pos..r.start] {
                    out.extend_from_slice(codec.token_bytes(t));
                }
                out.extend(text);
                pos = r.end;
            }
            for &t in &answer[pos..] {
                out.extend_from_slice(codec.token_bytes(t));
            }
            return out;
        }
        let stop = self.end_of_text(answer).unwrap_or(answer.len());
        let mut out = Vec::new();
        for &t in &answer[..stop] {
            if t != self.special.mask {
                out.extend_from_slice(codec.token_bytes(t));
            }
        }
        out
    }

    /// The constrained text of a finished answer: `prefill ++` the answer
    /// bytes ([`Layout::answer_bytes`]) without the opening fence (when
    /// present) and without a closing fence at the end.
    pub fn final_text(&self, codec: &dyn TextCodec, answer: &[u32]) -> Vec<u8> {
        self.text_of_answer_bytes(&self.answer_bytes(codec, answer))
    }

    /// As [`Layout::final_text`], from raw answer bytes.
    pub fn text_of_answer_bytes(&self, raw: &[u8]) -> Vec<u8> {
        let mut body = raw;
        if let Some(open) = self.fence_open() {
            if let Some(rest) = body.strip_prefix(open.as_slice()) {
                body = rest;
            }
            if let Some(c) = FENCE_CLOSERS.iter().find(|c| body.ends_with(c)) {
                body = &body[..body.len() - c.len()];
            }
        }
        let mut out = self.prefill.to_vec();
        out.extend_from_slice(body);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Result;

    /// Byte-level codec: ids < 256 are bytes; 256 = mask, 257 = EOS, 258 = pad,
    /// 259 = a special token with no bytes; 260 = "ab" (a two-byte token).
    struct Bytes;
    impl TextCodec for Bytes {
        fn encode(&self, text: &[u8]) -> Result<Vec<u32>> {
            Ok(text.iter().map(|&b| b as u32).collect())
        }
        fn token_bytes(&self, id: u32) -> &[u8] {
            const ALL: [u8; 256] = {
                let mut a = [0u8; 256];
                let mut i = 0;
                while i < 256 {
                    a[i] = i as u8;
                    i += 1;
                }
                a
            };
            match id {
                0..=255 => &ALL[id as usize..id as usize + 1],
                260 => b"ab",
                _ => b"",
            }
        }
    }

    const M: u32 = 256;
    const E: u32 = 257;
    const P: u32 = 258;
    const Z: u32 = 259;
    const AB: u32 = 260;

    fn special() -> SpecialTokens {
        SpecialTokens {
            mask: M,
            eos: E,
            pad: P,
            n_tokens: 261,
        }
    }

    /// `"x"` → bytes, `"_"` → M, `"$"` → E, `"%"` → P, `"~"` → Z, `"@"` → AB.
    fn canvas(s: &str) -> Vec<u32> {
        s.bytes()
            .map(|b| match b {
                b'_' => M,
                b'$' => E,
                b'%' => P,
                b'~' => Z,
                b'@' => AB,
                b => b as u32,
            })
            .collect()
    }

    /// Partial from a pattern where `_` is a hole.
    fn partial(s: &str) -> Partial {
        let mut p = Partial::new();
        for c in s.split_inclusive('_') {
            if let Some(t) = c.strip_suffix('_') {
                p.push_text(t);
                p.push_hole();
            } else {
                p.push_text(c);
            }
        }
        p
    }

    #[test]
    fn table() {
        let s = special();
        // (prefill, fence, canvas, expected partial or None)
        let cases: &[(&str, Option<&str>, &str, Option<&str>)] = &[
            ("", None, "abc", Some("abc")),
            ("", None, "", Some("")),
            ("", None, "____", Some("_")),
            ("", None, "ab__", Some("ab_")),
            ("", None, "__ab", Some("_ab")),
            ("", None, "a_b_c", Some("a_b_c")),
            ("", None, "a__b$", Some("a_b")),
            ("", None, "a__b$__$", Some("a_b")),
            ("", None, "a__b$_%_", Some("a_b")),
            ("", None, "a__b%", Some("a_b")),
            ("", None, "ab$c", None),
            ("", None, "ab$_c", None),
            ("", None, "$", Some("")),
            ("", None, "_$", Some("_")),
            ("", None, "a_~_b", Some("a_b")),
            ("", None, "a~b", Some("ab")),
            ("", None, "x@_", Some("xab_")),
            ("int f() ", None, "{_}", Some("int f() {_}")),
            ("int f() ", None, "$", Some("int f() ")),
            ("p", None, "___", Some("p_")),
            // Fenced.
            ("", Some("cpp"), "```cpp\nab", Some("ab")),
            ("", Some("cpp"), "```cpp\nab\n```", Some("ab")),
            ("", Some("cpp"), "```cpp\nab\n```\n", Some("ab")),
            ("", Some("cpp"), "```cpp\nab\n```$__", Some("ab")),
            ("", Some("cpp"), "```cpp\nab\n```\n$", Some("ab")),
            ("", Some("cpp"), "```cpp\nab\n``` x", Some("ab\n``` x")),
            ("", Some("cpp"), "```cpp\na_b\n```", Some("a_b")),
            ("", Some("cpp"), "```cpp\na_``", Some("a_")),
            ("", Some("cpp"), "```cpp\na_`$", Some("a_")),
            ("", Some("cpp"), "```cpp\na_\n", Some("a_")),
            ("", Some("cpp"), "```cpp\na_x`", Some("a_x`")),
            ("", Some("cpp"), "```cpp\na``", Some("a``")),
            ("", Some("cpp"), "```cpp\na__", Some("a_")),
            ("", Some("cpp"), "```cpp\n__", Some("_")),
            ("", Some("cpp"), "```cpp\n", Some("")),
            ("", Some("cpp"), "```cpp_", None),
            ("", Some("cpp"), "___", None),
            ("", Some("cpp"), "abc", None),
            (
                "void g() ",
                Some("cpp"),
                "```cpp\n{_}\n```$",
                Some("void g() {_}"),
            ),
        ];
        for &(prefill, fence, c, want) in cases {
            let layout = Layout {
                special: &s,
                prefill: prefill.as_bytes(),
                fence,
                regions: &[],
            };
            let got = layout.view(&Bytes, &canvas(c)).map(|v| v.partial);
            assert_eq!(got, want.map(partial), "{prefill:?} {fence:?} {c:?}");
            offsets_locate_tokens(&layout, &canvas(c));
        }
    }

    /// In the view of `answer`, the bytes of each ordinary token that the
    /// view keeps start at [`Layout::offset_of`]: the split the decoder's
    /// insertion points use (bytes stripped with a fence are not kept).
    fn offsets_locate_tokens(layout: &Layout<'_>, answer: &[u32]) {
        let Some(v) = layout.view(&Bytes, answer) else {
            return;
        };
        let open = layout.fence_open().map_or(0, |f| f.len());
        let kept = v.partial.text_len() + v.partial.n_holes();
        for (pos, &t) in answer.iter().enumerate() {
            let b = Bytes.token_bytes(t);
            let o = layout.offset_of(&Bytes, answer, pos);
            let before: usize = answer[..pos]
                .iter()
                .map(|&x| Bytes.token_bytes(x).len())
                .sum();
            if b.is_empty() || t == M || v.end.is_some_and(|e| pos > e) || before < open {
                continue;
            }
            if o + b.len() > kept {
                continue; // a closing fence, stripped
            }
            let (_, rest) = v.partial.split_at(o);
            let Some(Segment::Text(x)) = rest.segments().first() else {
                panic!("{answer:?} at {pos}: a hole at the offset");
            };
            assert!(
                x.starts_with(b),
                "{answer:?} at {pos}: offset {o} in {:?}",
                v.partial
            );
        }
    }

    #[test]
    fn runs_and_end() {
        let s = special();
        let layout = Layout {
            special: &s,
            prefill: b"",
            fence: None,
            regions: &[],
        };
        let v = layout.view(&Bytes, &canvas("a__b_$__")).unwrap();
        assert_eq!(v.runs, vec![1..3, 4..5]);
        assert_eq!(v.end, Some(5));
        let v = layout.view(&Bytes, &canvas("__")).unwrap();
        assert_eq!(v.runs, vec![0..2]);
        assert_eq!(v.end, None);
    }

    #[test]
    fn final_text_truncates_at_eos_and_strips_fences() {
        let s = special();
        let plain = Layout {
            special: &s,
            prefill: b"P",
            fence: None,
            regions: &[],
        };
        assert_eq!(plain.final_text(&Bytes, &canvas("ab$cd")), b"Pab");
        assert_eq!(plain.final_text(&Bytes, &canvas("a_b")), b"Pab");
        let fenced = Layout {
            special: &s,
            prefill: b"",
            fence: Some("cpp"),
            regions: &[],
        };
        assert_eq!(fenced.final_text(&Bytes, &canvas("```cpp\nx\n```$")), b"x");
        assert_eq!(fenced.final_text(&Bytes, &canvas("```cpp\nx\n```\n")), b"x");
        assert_eq!(fenced.final_text(&Bytes, &canvas("x")), b"x");
    }
}
