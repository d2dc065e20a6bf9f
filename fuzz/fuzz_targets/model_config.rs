//! `cargo fuzz run model_config`: see `cdiff::fuzzing::model_config`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cdiff::fuzzing::model_config(data);
});
