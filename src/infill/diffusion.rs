//! Infilling with a diffusion model: the template is the canvas (see the
//! module docs of [`crate::infill`]).

use super::ar::check_template;
use super::{InfillOutput, Mode, Template};
use crate::completable::Constraint;
use crate::decode::{decode_answer, DecodeConfig};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Denoiser, SpecialTokens, TextCodec};

/// Fills `template` with a masked-diffusion model: the answer after `prompt`
/// is the template, each chunk encoded with `codec` and each region
/// `hole_tokens` masks; the denoising loop of [`crate::decode`] runs on it
/// with `cfg` (`cfg.max_tokens` and `cfg.fence` are not used; `cfg.prefill`
/// still precedes the constrained text). A region may end early with EOS/pad,
/// which is not part of its fill.
///
/// # Errors
/// `hole_tokens == 0`; a model or constraint error; in a constrained mode,
/// no constraint or a template that is not completable.
#[allow(clippy::too_many_arguments)]
pub fn infill_diffusion(
    model: &mut dyn Denoiser,
    codec: &dyn TextCodec,
    special: &SpecialTokens,
    constraint: Option<&Constraint>,
    prompt: &[u32],
    template: &Template,
    hole_tokens: usize,
    cfg: &DecodeConfig,
) -> Result<InfillOutput> {
    if hole_tokens == 0 {
        return Err(Error::new(
            ErrorKind::Partial,
            "a region needs at least one mask token (--hole-tokens)",
        ));
    }
    let mut time_constraint = std::time::Duration::ZERO;
    if cfg.mode != Mode::Vanilla {
        if let Some(c) = constraint {
            let t0 = std::time::Instant::now();
            check_template(c, template)?;
            time_constraint += t0.elapsed();
        }
    }
    let mut answer = Vec::new();
    let mut regions = Vec::new();
    for (i, chunk) in template.chunks().iter().enumerate() {
        if i > 0 {
            regions.push(answer.len()..answer.len() + hole_tokens);
            answer.extend(std::iter::repeat_n(special.mask, hole_tokens));
        }
        answer.extend(codec.encode(chunk)?);
    }
    let out = decode_answer(
        model, codec, special, constraint, prompt, &answer, &regions, cfg, None,
    )?;
    Ok(InfillOutput {
        text: out.text,
        fills: out.region_fills,
        valid: out.valid,
        failed: out.failed,
        tokens: out.accepted,
        rejections: out.rejections,
        used_witness: out.used_witness,
        forward_passes: out.forward_passes,
        time_model: out.time_model,
        time_constraint: out.time_constraint + time_constraint,
        time_witness: out.time_witness,
        masks: 0,
        masks_abandoned: 0,
        time_overlapped: std::time::Duration::ZERO,
    })
}
