//! Hopcroft's DFA minimisation over a dense, total transition table.
//!
//! Input: `n` states, `k` letters, `trans[s * k + a]` the successor of `s` on
//! `a`, and an initial partition (`class[s]`, e.g. "which terminals accept
//! here"). Output: for every state, the index of its block in the coarsest
//! partition that refines `class` and is compatible with the transitions.
//! Blocks are numbered by first occurrence in state order, so the result is a
//! pure function of the input. Cost `O(k · n · log n)`.

/// Computes the block of every state in the coarsest stable refinement.
pub fn hopcroft(n: usize, k: usize, trans: &[u32], class: &[u32]) -> Vec<u32> {
    debug_assert_eq!(trans.len(), n * k);
    debug_assert_eq!(class.len(), n);
    if n == 0 {
        return Vec::new();
    }
    // Inverse transitions in CSR form, indexed by (target * k + letter).
    let mut counts = vec![0u32; n * k + 1];
    for s in 0..n {
        for a in 0..k {
            let t = trans[s * k + a] as usize;
            counts[t * k + a + 1] += 1;
        }
    }
    for i in 1..counts.len() {
        counts[i] += counts[i - 1];
    }
    let mut fill = counts.clone();
    let mut inv = vec![0u32; n * k];
    for s in 0..n {
        for a in 0..k {
            let t = trans[s * k + a] as usize;
            let slot = &mut fill[t * k + a];
            inv[*slot as usize] = s as u32;
            *slot += 1;
        }
    }

    // Refinable partition: `elems` grouped by block; block b occupies
    // elems[start[b]..end[b]]; `loc[s]` is s's index in `elems`.
    let mut order: Vec<u32> = (0..n as u32).collect();
    order.sort_by_key(|&s| (class[s as usize], s));
    let mut elems = order;
    let mut loc = vec![0u32; n];
    let mut block = vec![0u32; n];
    let mut start: Vec<u32> = Vec::new();
    let mut end: Vec<u32> = Vec::new();
    for (i, &s) in elems.iter().enumerate() {
        if i == 0 || class[s as usize] != class[elems[i - 1] as usize] {
            start.push(i as u32);
            end.push(i as u32);
        }
        let b = start.len() as u32 - 1;
        block[s as usize] = b;
        loc[s as usize] = i as u32;
        end[b as usize] = i as u32 + 1;
    }
    let mut marked = vec![0u32; start.len()];

    // Worklist of splitters (block, letter); all blocks initially.
    let mut in_work: Vec<bool> = vec![true; start.len() * k];
    let mut work: Vec<(u32, u32)> = Vec::new();
    for b in 0..start.len() as u32 {
        for a in 0..k as u32 {
            work.push((b, a));
        }
    }
    let mut touched: Vec<u32> = Vec::new();
    let mut preds: Vec<u32> = Vec::new();
    while let Some((sb, a)) = work.pop() {
        in_work[sb as usize * k + a as usize] = false;
        preds.clear();
        for i in start[sb as usize]..end[sb as usize] {
            let t = elems[i as usize] as usize;
            let idx = t * k + a as usize;
            preds.extend_from_slice(&inv[counts[idx] as usize..counts[idx + 1] as usize]);
        }
        // Mark predecessors: move each to the front part of its block.
        for &p in &preds {
            let b = block[p as usize] as usize;
            let first_unmarked = start[b] + marked[b];
            let lp = loc[p as usize];
            if lp < first_unmarked {
                continue; // already marked
            }
            if marked[b] == 0 {
                touched.push(b as u32);
            }
            let other = elems[first_unmarked as usize];
            elems.swap(lp as usize, first_unmarked as usize);
            loc[other as usize] = lp;
            loc[p as usize] = first_unmarked;
            marked[b] += 1;
        }
        for &b in &touched {
            let b = b as usize;
            let m = marked[b];
            marked[b] = 0;
            let size = end[b] - start[b];
            if m == size {
                continue;
            }
            // Split: the marked part becomes a new block.
            let nb = start.len();
            start.push(start[b]);
            end.push(start[b] + m);
            start[b] += m;
            marked.push(0);
            for i in start[nb]..end[nb] {
                block[elems[i as usize] as usize] = nb as u32;
            }
            in_work.resize(start.len() * k, false);
            let old_size = size - m;
            for c in 0..k {
                if in_work[b * k + c] {
                    in_work[nb * k + c] = true;
                    work.push((nb as u32, c as u32));
                } else {
                    let pick = if m <= old_size { nb } else { b };
                    in_work[pick * k + c] = true;
                    work.push((pick as u32, c as u32));
                }
            }
        }
        touched.clear();
    }

    // Renumber blocks by first occurrence in state order.
    let mut remap = vec![u32::MAX; start.len()];
    let mut next = 0u32;
    let mut out = vec![0u32; n];
    for s in 0..n {
        let b = block[s] as usize;
        if remap[b] == u32::MAX {
            remap[b] = next;
            next += 1;
        }
        out[s] = remap[b];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_equivalent_states() {
        // States 1 and 2 both go to accepting 3 on letter 0; 0 is the dead sink.
        let k = 1;
        let trans = [0, 3, 3, 0];
        let class = [0, 0, 0, 1];
        let b = hopcroft(4, k, &trans, &class);
        assert_eq!(b[1], b[2]);
        assert_ne!(b[0], b[1]);
        assert_ne!(b[3], b[1]);
    }

    #[test]
    fn keeps_distinguishable_states() {
        // A chain 1 -a-> 2 -a-> 3(acc): 1 and 2 differ by distance to acceptance.
        let trans = [0, 2, 3, 0];
        let class = [0, 0, 0, 1];
        let b = hopcroft(4, 1, &trans, &class);
        assert_eq!(b, vec![0, 1, 2, 3]);
    }
}
