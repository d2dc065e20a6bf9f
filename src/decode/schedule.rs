//! How many tokens each denoising step commits.
//!
//! * **Dream** (`generation_utils.py`, `_sample`): timesteps
//!   `linspace(1, 1e-3, steps + 1)` (float32, as `torch.linspace` computes
//!   them); at step `s` with `t = ts[s]`, `t' = ts[s+1]`, commit
//!   `int(n_masked * (1 - t'/t))` tokens, all remaining ones at the last
//!   step. The count is taken over the whole canvas's masks.
//! * **LLaDA** (`generate.py`, `get_num_transfer_tokens`): the answer is cut
//!   into blocks of `block_length`, the steps divided evenly over blocks; in a
//!   block with `m` masks and `k` steps, step `i` commits `m / k` tokens plus
//!   one for the first `m % k` steps. LLaDA asserts that the lengths divide;
//!   here a last shorter block and a floor of one step per block are allowed
//!   instead (documented divergence, identical when they divide).
//!
//! Cost: `O(steps)`.

/// Dream's eps for the final timestep.
pub const DREAM_EPS: f32 = 1e-3;

/// `torch.linspace(start, end, n)` in float32: the first half counted from
/// `start`, the second from `end`, as PyTorch's kernel does.
pub fn linspace_f32(start: f32, end: f32, n: usize) -> Vec<f32> {
    match n {
        0 => Vec::new(),
        1 => vec![start],
        _ => {
            let step = (end - start) / (n - 1) as f32;
            let half = n / 2;
            (0..n)
                .map(|i| {
                    if i < half {
                        start + step * i as f32
                    } else {
                        end - step * (n - i - 1) as f32
                    }
                })
                .collect()
        }
    }
}

/// Dream's timesteps for `steps` steps: `linspace(1, 1e-3, steps + 1)`.
pub fn dream_timesteps(steps: usize) -> Vec<f32> {
    linspace_f32(1.0, DREAM_EPS, steps + 1)
}

/// Number of tokens Dream commits at step `step` (0-based) of `steps` when
/// `n_masked` masks remain: `int(n_masked * (1 - s/t))`, all at the last step.
pub fn dream_transfer(timesteps: &[f32], step: usize, steps: usize, n_masked: usize) -> usize {
    if step + 1 >= steps {
        return n_masked;
    }
    let t = timesteps[step];
    let s = timesteps[step + 1];
    let n = (n_masked as f32 * (1.0 - s / t)) as usize;
    n.min(n_masked)
}

/// LLaDA's per-step counts for a block with `masked` masks and `steps` steps.
pub fn llada_transfer_counts(masked: usize, steps: usize) -> Vec<usize> {
    let steps = steps.max(1);
    let base = masked / steps;
    let rem = masked % steps;
    (0..steps).map(|i| base + usize::from(i < rem)).collect()
}

/// The block layout of a LLaDA answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LladaPlan {
    /// Answer ranges of the blocks, in order.
    pub blocks: Vec<std::ops::Range<usize>>,
    /// Steps spent on each block.
    pub steps_per_block: usize,
}

impl LladaPlan {
    /// Blocks of `block_length` over `gen_length` answer positions, `steps`
    /// divided evenly among them (at least one step per block).
    pub fn new(gen_length: usize, block_length: usize, steps: usize) -> LladaPlan {
        let bl = block_length.max(1);
        let blocks: Vec<_> = (0..gen_length.div_ceil(bl))
            .map(|b| b * bl..((b + 1) * bl).min(gen_length))
            .collect();
        let steps_per_block = (steps / blocks.len().max(1)).max(1);
        LladaPlan {
            blocks,
            steps_per_block,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dream_counts_sum_to_canvas() {
        for &(n, steps) in &[(16, 8), (32, 16), (256, 256), (256, 64), (7, 10), (1, 1)] {
            let ts = dream_timesteps(steps);
            assert_eq!(ts.len(), steps + 1);
            assert_eq!(ts[0], 1.0);
            assert!((ts[steps] - DREAM_EPS).abs() < 1e-7);
            let mut left = n;
            let mut total = 0;
            for s in 0..steps {
                let k = dream_transfer(&ts, s, steps, left);
                assert!(k <= left);
                left -= k;
                total += k;
            }
            assert_eq!(total, n, "n={n} steps={steps}");
            assert_eq!(left, 0);
        }
    }

    #[test]
    fn dream_first_step_matches_reference() {
        // 256 masks, 256 steps: t=1, s=1-0.999/256 → int(256 * 0.00390234) = 0.
        let ts = dream_timesteps(256);
        assert_eq!(dream_transfer(&ts, 0, 256, 256), 0);
        // 16 masks, 4 steps: ts = [1, .75025, .5005, .25075, .001].
        let ts = dream_timesteps(4);
        assert_eq!(dream_transfer(&ts, 0, 4, 16), 3); // 16 * 0.24975
        assert_eq!(dream_transfer(&ts, 1, 4, 13), 4); // 13 * 0.3329
        assert_eq!(dream_transfer(&ts, 3, 4, 5), 5);
    }

    #[test]
    fn llada_counts_and_blocks() {
        assert_eq!(llada_transfer_counts(32, 8), vec![4; 8]);
        assert_eq!(llada_transfer_counts(10, 4), vec![3, 3, 2, 2]);
        assert_eq!(llada_transfer_counts(2, 4), vec![1, 1, 0, 0]);
        let p = LladaPlan::new(32, 8, 16);
        assert_eq!(p.blocks, vec![0..8, 8..16, 16..24, 24..32]);
        assert_eq!(p.steps_per_block, 4);
        let total: usize = p
            .blocks
            .iter()
            .map(|b| {
                llada_transfer_counts(b.len(), p.steps_per_block)
                    .iter()
                    .sum::<usize>()
            })
            .sum();
        assert_eq!(total, 32);
        let p = LladaPlan::new(20, 8, 3);
        assert_eq!(p.blocks, vec![0..8, 8..16, 16..20]);
        assert_eq!(p.steps_per_block, 1);
    }
}
