//! The device the model tests run on: `CDIFF_TEST_DEVICE` (`cpu`, `cuda`,
//! `cuda:N`, `metal`, `auto`; as `--device` takes it), the CPU when unset.
//! `eval/gpu.sh` runs the golden tests with `CDIFF_TEST_DEVICE=cuda` on a
//! build with `--features cuda`.

use candle_core::Device;
use cdiff::model::DeviceSpec;

/// Opens the device `CDIFF_TEST_DEVICE` names (the CPU when unset).
pub fn test_device() -> Device {
    match std::env::var("CDIFF_TEST_DEVICE") {
        Ok(s) => s
            .parse::<DeviceSpec>()
            .and_then(DeviceSpec::open)
            .unwrap_or_else(|e| panic!("CDIFF_TEST_DEVICE={s}: {e}")),
        Err(_) => Device::Cpu,
    }
}
