//! Fuzzes the entry-wise merge driver (`mem7::fuzz::merge_driver`: no panic on any
//! three texts; no entry lost when both sides add entries to a shared base).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mem7::fuzz::merge_driver(data));
