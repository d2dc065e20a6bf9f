//! Times a diffusion model's forward pass on a canvas of `TOKENS` tokens:
//! the forward alone (the device synchronized after it), the forward plus
//! the logits of every row copied to the CPU in f32, and the forward plus
//! the copy a decoding step makes: the rows in the model's dtype
//! (`Denoiser::forward_native`; bf16 is half the bytes). `eval/gpu.sh` runs it on the full-size random-weight
//! models; `eval/gpu_reference.py` times PyTorch on the same shapes.
//!
//! ```sh
//! cargo run --release --example forward_time -- MODEL_DIR [TOKENS] [REPS] [DEVICE] [DTYPE]
//! ```
//!
//! Defaults: 256 tokens, 10 timed repetitions after 2 untimed ones, `auto`
//! device, `bf16`. Prints one line: median, min and max milliseconds of
//! each of the three.

use std::time::Instant;

use candle_core::Device;
use cdiff::model::{load, parse_dtype, Denoiser, DeviceSpec};

fn main() {
    if let Err(e) = run() {
        eprintln!("forward_time: {e}");
        std::process::exit(2);
    }
}

fn stats(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    let median = v[v.len() / 2];
    format!(
        "median {median:.1} ms (min {:.1}, max {:.1})",
        v[0],
        v[v.len() - 1]
    )
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .first()
        .ok_or("usage: forward_time MODEL_DIR [TOKENS] [REPS] [DEVICE] [DTYPE]")?;
    let num = |i: usize, d: usize| -> Result<usize, String> {
        args.get(i)
            .map_or(Ok(d), |s| s.parse().map_err(|e| format!("{s:?}: {e}")))
    };
    let tokens = num(1, 256)?;
    let reps = num(2, 10)?.max(1);
    let spec: DeviceSpec = args
        .get(3)
        .map_or("auto", String::as_str)
        .parse()
        .map_err(|e| format!("{e}"))?;
    let dtype =
        parse_dtype(args.get(4).map_or("bf16", String::as_str)).map_err(|e| e.to_string())?;
    let device = spec.open().map_err(|e| e.to_string())?;
    let mut m = load(dir, &device, dtype).map_err(|e| e.to_string())?;
    // A canvas of masks after a few text tokens, as a decode's first step.
    let mask = m.special.mask;
    let ids: Vec<u32> = (0..tokens)
        .map(|i| if i < 8 { (i as u32 * 37) % 256 } else { mask })
        .collect();
    let sync = |d: &Device| d.synchronize().map_err(|e| e.to_string());
    let (mut forward, mut with_copy, mut native_copy) = (Vec::new(), Vec::new(), Vec::new());
    for rep in 0..reps + 2 {
        let t0 = Instant::now();
        let logits = m.model.forward(&ids).map_err(|e| e.to_string())?;
        sync(&device)?;
        let t1 = t0.elapsed().as_secs_f64() * 1e3;
        let rows = logits.to_device(&Device::Cpu).map_err(|e| e.to_string())?;
        let t2 = t0.elapsed().as_secs_f64() * 1e3;
        if rows.dims() != [tokens, m.model.vocab_size()] {
            return Err(format!("logits of shape {:?}", rows.dims()));
        }
        // What a decoding step copies: the rows in the model's dtype.
        let t0 = Instant::now();
        let native = m.model.forward_native(&ids).map_err(|e| e.to_string())?;
        let native = native.to_device(&Device::Cpu).map_err(|e| e.to_string())?;
        let t3 = t0.elapsed().as_secs_f64() * 1e3;
        if native.dims() != rows.dims() {
            return Err(format!("native logits of shape {:?}", native.dims()));
        }
        if rep >= 2 {
            forward.push(t1);
            with_copy.push(t2);
            native_copy.push(t3);
        }
    }
    println!(
        "{dir}: {tokens} tokens, {dtype:?}, {reps} reps: forward {}; with the f32 logits to the CPU {}; \
         with the logits in the model's dtype to the CPU {}",
        stats(forward),
        stats(with_copy),
        stats(native_copy)
    );
    Ok(())
}
