#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| schedlab::fuzzing::platform(data));
