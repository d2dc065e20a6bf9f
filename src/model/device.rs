//! Where a model runs: `--device auto|cpu|cuda[:N]|metal[:N]`.
//!
//! CUDA and Metal are cargo features (`--features cuda`, `--features metal`)
//! because they need their toolkits at build time. `auto` takes the first
//! CUDA device when the build has CUDA and the machine a GPU, else the first
//! Metal device likewise, else the CPU. Asking for a backend the build lacks
//! is an error that says how to rebuild, never a silent CPU run.

use std::str::FromStr;

use candle_core::{Device, DeviceLocation};

use crate::error::{Error, ErrorKind, Result};

/// A device as the user names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    /// CUDA when built and present, else Metal likewise, else the CPU.
    Auto,
    /// The CPU.
    Cpu,
    /// A CUDA GPU by ordinal.
    Cuda(usize),
    /// A Metal GPU by ordinal.
    Metal(usize),
}

impl FromStr for DeviceSpec {
    type Err = Error;

    /// `auto`, `cpu`, `cuda`, `cuda:N`, `metal`, `metal:N` (any case).
    fn from_str(s: &str) -> Result<DeviceSpec> {
        let lower = s.trim().to_ascii_lowercase();
        let (kind, ordinal) = match lower.split_once(':') {
            Some((k, n)) => {
                let n = n.parse::<usize>().map_err(|_| {
                    Error::new(
                        ErrorKind::Setting,
                        format!("device {s:?}: the ordinal after ':' must be a number"),
                    )
                })?;
                (k, Some(n))
            }
            None => (lower.as_str(), None),
        };
        match (kind, ordinal) {
            ("auto", None) => Ok(DeviceSpec::Auto),
            ("cpu", None) => Ok(DeviceSpec::Cpu),
            ("cuda", n) => Ok(DeviceSpec::Cuda(n.unwrap_or(0))),
            ("metal", n) => Ok(DeviceSpec::Metal(n.unwrap_or(0))),
            _ => Err(Error::new(
                ErrorKind::Setting,
                format!(
                    "unknown device {s:?} (expected auto, cpu, cuda, cuda:N, metal or metal:N)"
                ),
            )),
        }
    }
}

impl DeviceSpec {
    /// Opens the device.
    ///
    /// # Errors
    /// [`ErrorKind::Setting`]: a backend this build lacks (with the cargo
    /// feature to rebuild with) or a device that cannot be opened.
    pub fn open(self) -> Result<Device> {
        match self {
            DeviceSpec::Cpu => Ok(Device::Cpu),
            DeviceSpec::Auto => {
                // A build with a GPU backend on a machine without the GPU
                // (or its driver) runs on the CPU.
                let gpu = if candle_core::utils::cuda_is_available() {
                    Device::new_cuda(0).ok()
                } else if candle_core::utils::metal_is_available() {
                    Device::new_metal(0).ok()
                } else {
                    None
                };
                Ok(gpu.unwrap_or(Device::Cpu))
            }
            DeviceSpec::Cuda(n) => {
                if !candle_core::utils::cuda_is_available() {
                    return Err(missing("CUDA", "cuda"));
                }
                Device::new_cuda(n).map_err(|e| {
                    Error::new(
                        ErrorKind::Setting,
                        format!("cannot open CUDA device {n}: {e}"),
                    )
                })
            }
            DeviceSpec::Metal(n) => {
                if !candle_core::utils::metal_is_available() {
                    return Err(missing("Metal", "metal"));
                }
                Device::new_metal(n).map_err(|e| {
                    Error::new(
                        ErrorKind::Setting,
                        format!("cannot open Metal device {n}: {e}"),
                    )
                })
            }
        }
    }
}

fn missing(backend: &str, feature: &str) -> Error {
    Error::new(
        ErrorKind::Setting,
        format!(
            "{backend} was asked for, but this cdiff was built without it: rebuild with \
             `cargo build --release --features {feature}` (needs the {backend} toolkit), or use \
             --device cpu"
        ),
    )
}

/// A device's name as `--device` spells it (`cpu`, `cuda:0`, `metal:0`).
pub fn device_name(d: &Device) -> String {
    match d.location() {
        DeviceLocation::Cpu => "cpu".to_string(),
        DeviceLocation::Cuda { gpu_id } => format!("cuda:{gpu_id}"),
        DeviceLocation::Metal { gpu_id } => format!("metal:{gpu_id}"),
    }
}

/// Fixes, once, how many threads candle's CPU matrix products use, so that
/// it stops asking the system on every product. Call it at the start of a
/// program that runs models on the CPU, before any other thread exists
/// (it sets an environment variable, which is not thread-safe).
///
/// candle (0.11) decides the thread count of every CPU matrix product
/// anew unless `RAYON_NUM_THREADS` is set, and on Linux that means reading
/// and parsing `/proc/cpuinfo` each time: 14,000 reads for two instances
/// of `examples/infill_overhead`, a fifth of its time, and a shipped
/// model's forward pass 25–35 % slower on this 2-core machine. This sets
/// `RAYON_NUM_THREADS`, if it is not set, to the count candle computes
/// (physical cores, or its CPU mask), so the products run exactly as
/// before, once the count is known. The `cdiff` binary calls it first
/// thing; the variable also sizes rayon's global pool, which cdiff does
/// not use for models (evaluation workers have their own pool).
///
/// ```
/// cdiff::model::pin_cpu_threads();
/// assert!(std::env::var("RAYON_NUM_THREADS").is_ok());
/// ```
pub fn pin_cpu_threads() {
    if std::env::var_os("RAYON_NUM_THREADS").is_none() {
        let n = candle_core::utils::get_num_threads();
        std::env::set_var("RAYON_NUM_THREADS", n.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_the_cpu_build_says_how_to_get_cuda() {
        for (s, want) in [
            ("auto", DeviceSpec::Auto),
            ("CPU", DeviceSpec::Cpu),
            ("cuda", DeviceSpec::Cuda(0)),
            ("cuda:1", DeviceSpec::Cuda(1)),
            ("metal", DeviceSpec::Metal(0)),
        ] {
            assert_eq!(s.parse::<DeviceSpec>().unwrap(), want, "{s}");
        }
        for bad in ["gpu", "cuda:x", "cpu:0", ""] {
            let e = bad.parse::<DeviceSpec>().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Setting, "{bad}");
        }
        assert_eq!(device_name(&DeviceSpec::Cpu.open().unwrap()), "cpu");
        if !candle_core::utils::cuda_is_available() {
            let e = DeviceSpec::Cuda(0).open().unwrap_err();
            assert!(e.to_string().contains("--features cuda"), "{e}");
            assert_eq!(device_name(&DeviceSpec::Auto.open().unwrap()), "cpu");
        }
    }
}
