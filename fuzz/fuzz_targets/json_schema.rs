//! `cargo fuzz run json_schema`: see `cdiff::fuzzing::json_schema`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cdiff::fuzzing::json_schema(data);
});
