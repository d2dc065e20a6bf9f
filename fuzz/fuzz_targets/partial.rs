//! `cargo fuzz run partial`: see `cdiff::fuzzing::partial`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cdiff::fuzzing::partial(data);
});
