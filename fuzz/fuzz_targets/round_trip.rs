//! Fuzzes the markdown round trip (`mem7::fuzz::round_trip`: a value written and read
//! back is itself; any bytes as a memory file parse without a panic).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| mem7::fuzz::round_trip(data));
