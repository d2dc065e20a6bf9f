//! `cdiff train`: masked-diffusion training of a small LLaDA-architecture
//! model on CPU (see `cdiff::model::train`).

use cdiff::model::train::{read_texts, train, TrainConfig};

use super::args::TrainArgs;
use super::CliError;

/// Runs `cdiff train`.
pub fn run(a: &TrainArgs) -> Result<(), CliError> {
    let lib = |e: cdiff::Error| CliError::Lib {
        path: None,
        error: e,
    };
    for p in &a.data {
        if !p.is_file() {
            return Err(CliError::Input(format!(
                "training data {} is not a file",
                p.display()
            )));
        }
    }
    let texts = read_texts(&a.data).map_err(lib)?;
    if texts.is_empty() {
        return Err(CliError::Input("the training data holds no texts".into()));
    }
    let tc = TrainConfig {
        steps: a.steps,
        batch: a.batch,
        ctx: a.ctx,
        layers: a.layers,
        hidden: a.hidden,
        heads: a.heads,
        mlp: a.mlp.unwrap_or((a.hidden * 8 / 3).div_ceil(32) * 32),
        lr: a.lr,
        warmup: a.warmup,
        seed: a.seed,
        checkpoint_every: a.checkpoint_every,
        ..TrainConfig::default()
    };
    eprintln!(
        "cdiff: training on {} texts from {} file(s) -> {}",
        texts.len(),
        a.data.len(),
        a.out.display()
    );
    let log_every = a.log_every.max(1);
    let report = train(&tc, &texts, Some(&a.out), a.resume, |p| {
        if p.step.is_multiple_of(log_every) || p.step == p.steps || p.checkpoint {
            eprintln!(
                "cdiff: step {}/{} loss {:.4} ema {:.4} lr {:.2e} grad {:.2} {:.0} tok/s{}",
                p.step,
                p.steps,
                p.loss,
                p.loss_ema,
                p.lr,
                p.grad_norm,
                p.tokens_per_s,
                if p.checkpoint { " (checkpoint)" } else { "" }
            );
        }
    })
    .map_err(|e| CliError::Lib {
        path: Some(a.out.clone()),
        error: e,
    })?;
    if let Some(from) = report.resumed_from {
        eprintln!(
            "cdiff: resumed from step {from} ({})",
            if report.moments_restored {
                "optimizer moments restored"
            } else {
                "no optimizer.safetensors: moments restarted from zero"
            }
        );
    }
    eprintln!(
        "cdiff: done: step {}, {} parameters, {} sequences ({} skipped as too long), loss ema {:.4}, {:.1} s",
        report.step,
        report.parameters,
        report.sequences,
        report.skipped,
        report.loss_ema,
        report.seconds
    );
    Ok(())
}
