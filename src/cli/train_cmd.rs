//! `cdiff train`: masked-diffusion training of a small LLaDA-architecture
//! model on CPU (see `cdiff::model::train`).

use cdiff::model::train::{read_texts, train_on, TrainConfig};

use std::io::IsTerminal;

use super::args::TrainArgs;
use super::CliError;

/// Runs `cdiff train`.
pub fn run(a: &TrainArgs) -> Result<(), CliError> {
    let lib = |e: cdiff::Error| CliError::Lib {
        path: None,
        error: e,
    };
    if !a.resume && !a.force {
        if let Some(f) = model_file(&a.out) {
            return Err(CliError::Input(format!(
                "{} already holds a model ({f}): pass --resume to continue training it, \
                 or --force to train from scratch and overwrite it",
                a.out.display()
            )));
        }
    }
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
    let device = super::decode_cmd::device_from(&a.device)?;
    eprintln!(
        "cdiff: training on {} texts from {} file(s) on {} -> {}",
        texts.len(),
        a.data.len(),
        cdiff::model::device_name(&device),
        a.out.display()
    );
    let log_every = a.log_every.max(1);
    // On a terminal: a progress bar redrawn every step, and a kept line at
    // every log step and checkpoint; otherwise (logs, CI) only those lines.
    let bar = std::io::stderr().is_terminal();
    let report = train_on(&tc, &texts, Some(&a.out), a.resume, &device, |p| {
        let line = format!(
            "step {}/{} loss {:.4} ema {:.4} lr {:.2e} grad {:.2} {:.0} tok/s",
            p.step, p.steps, p.loss, p.loss_ema, p.lr, p.grad_norm, p.tokens_per_s
        );
        let keep = p.step.is_multiple_of(log_every) || p.step == p.steps || p.checkpoint;
        if keep {
            let mark = if p.checkpoint { " (checkpoint)" } else { "" };
            let clear = if bar { "\r\x1b[K" } else { "" };
            eprintln!("{clear}cdiff: {line}{mark}");
        }
        if bar && p.step < p.steps {
            eprint!("\r\x1b[K{} {line}", progress_bar(p.step, p.steps, 30));
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

/// The file that makes `dir` a model directory (`config.json` or
/// `model.safetensors`), if there is one.
fn model_file(dir: &std::path::Path) -> Option<&'static str> {
    ["config.json", "model.safetensors"]
        .into_iter()
        .find(|f| dir.join(f).exists())
}

/// `[#####.....]` with `width` cells for `done` of `total`.
fn progress_bar(done: usize, total: usize, width: usize) -> String {
    let filled = (done * width)
        .checked_div(total)
        .unwrap_or(width)
        .min(width);
    format!("[{}{}]", "#".repeat(filled), ".".repeat(width - filled))
}

#[cfg(test)]
mod tests {
    use super::progress_bar;

    #[test]
    fn progress_bar_fills_in_proportion() {
        assert_eq!(progress_bar(0, 10, 4), "[....]");
        assert_eq!(progress_bar(5, 10, 4), "[##..]");
        assert_eq!(progress_bar(10, 10, 4), "[####]");
        assert_eq!(progress_bar(3, 0, 4), "[####]");
    }
}
