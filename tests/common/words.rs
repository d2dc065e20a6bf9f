//! Exhaustive enumeration for brute-force oracles.
#![allow(dead_code)]

/// Every word over `alphabet` of length ≤ `max`, shortest first.
pub fn all_words(alphabet: &[u8], max: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut frontier = vec![Vec::new()];
    for _ in 0..max {
        let mut next = Vec::new();
        for w in &frontier {
            for &a in alphabet {
                let mut x: Vec<u8> = w.clone();
                x.push(a);
                next.push(x);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out
}
