//! Operations rounded where the authors' PyTorch code rounds them, so that
//! cdiff's bf16 (and f16) forward passes make the same rounding errors as
//! theirs (issue 9: bf16 error within 1.05× PyTorch's on the same weights).
//!
//! * **RMSNorm** (Qwen2/Dream `Qwen2RMSNorm`, LLaDA `RMSLayerNorm`): the
//!   input in f32, `x · rsqrt(mean(x²) + ε)` in f32, **rounded** to the
//!   model's dtype, then multiplied by the weight in that dtype (a second
//!   rounding). candle's fused `rms_norm` rounds once, which is not more
//!   accurate in aggregate: it is a different error.
//! * **SiLU**: PyTorch's CPU and CUDA kernels compute it in f32 and round
//!   once; candle's bf16 `silu` rounds its intermediate steps.
//! * **Linear layers with a bias** (Dream's q/k/v projections): PyTorch's
//!   `addmm` adds the bias to the f32 accumulator and rounds once; candle
//!   rounds the product, then the sum. On the CPU [`linear_biased`] runs
//!   them in f32 (no slower there than candle's bf16 matmul: 56–66 ms for
//!   both on a 256 × 3584 × 3584 product, weights converted each call) and
//!   rounds once; on GPUs, where that would cost the tensor cores, the
//!   extra rounding stays.
//!
//! In f32 both are the plain formulas. Cost: two dtype conversions of the
//! activations per call, nothing per weight.

use candle_core::{DType, Module, Tensor, D};
use candle_nn::{Linear, VarBuilder};

/// RMSNorm with PyTorch's rounding points (see the module docs).
#[derive(Clone, Debug)]
pub(crate) struct RmsNorm {
    weight: Tensor,
    eps: f64,
}

/// An [`RmsNorm`] of width `size` whose weight is `vb`'s `weight`.
pub(crate) fn rms_norm(size: usize, eps: f64, vb: VarBuilder) -> candle_core::Result<RmsNorm> {
    let weight = vb.get_with_hints(size, "weight", candle_nn::Init::Const(1.0))?;
    Ok(RmsNorm { weight, eps })
}

impl RmsNorm {
    /// The norm from basic (differentiable) operations, for training.
    pub(crate) fn forward_diff(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        self.rounded(x)
    }

    /// The norm from basic operations, rounded where PyTorch rounds.
    fn rounded(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let dtype = x.dtype();
        let xf = x.to_dtype(DType::F32)?;
        let var = xf.sqr()?.mean_keepdim(D::Minus1)?;
        let inv = (var + self.eps)?.sqrt()?.recip()?;
        xf.broadcast_mul(&inv)?
            .to_dtype(dtype)?
            .broadcast_mul(&self.weight)
    }
}

impl Module for RmsNorm {
    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        if x.dtype() == DType::F32 {
            // candle's fused kernel: the same formula, within an ulp.
            return candle_nn::ops::rms_norm(x, &self.weight, self.eps as f32);
        }
        self.rounded(x)
    }
}

/// SiLU computed in f32 and rounded once to `x`'s dtype.
pub(crate) fn silu(x: &Tensor) -> candle_core::Result<Tensor> {
    if x.dtype() == DType::F32 {
        return candle_nn::ops::silu(x);
    }
    candle_nn::ops::silu(&x.to_dtype(DType::F32)?)?.to_dtype(x.dtype())
}

/// `l(x)` for a linear layer with a bias, rounded once as PyTorch's `addmm`
/// on the CPU (see the module docs); elsewhere, and in f32, `l.forward(x)`.
pub(crate) fn linear_biased(l: &Linear, x: &Tensor) -> candle_core::Result<Tensor> {
    let Some(bias) = l.bias() else {
        return l.forward(x);
    };
    if x.dtype() == DType::F32 || !x.device().is_cpu() {
        return l.forward(x);
    }
    let w = l.weight().to_dtype(DType::F32)?;
    x.to_dtype(DType::F32)?
        .broadcast_matmul(&w.t()?)?
        .broadcast_add(&bias.to_dtype(DType::F32)?)?
        .to_dtype(x.dtype())
}
