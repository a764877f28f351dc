//! Fuzzes one line of `mem7 import` (`mem7::fuzz::import_line`: a record or an error,
//! never a panic; an accepted store reads back from its entry as itself).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mem7::fuzz::import_line(data));
