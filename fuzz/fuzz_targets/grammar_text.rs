//! `cargo fuzz run grammar_text`: see `cdiff::fuzzing::grammar_text`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cdiff::fuzzing::grammar_text(data);
});
