//! `trace::import::import_window`, strict and tolerant, on any text: it
//! answers Ok or an `ImportError`, never panics, aborts or hangs. What
//! imports is also measured and turned into a replay workload, as
//! `schedlab trace import` does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_core::trace::{ftrace, import, perfetto};
use schedlab_core::workload::Workload;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The first byte picks a measuring window, so the clipping is fuzzed too.
    let window = match data.first().map(|b| b % 4) {
        Some(1) => Some((0, u64::MAX)),
        Some(2) => Some((5_973_900_000_000, 5_973_950_000_000)),
        Some(3) => Some((u64::MAX / 2, 1)),
        _ => None,
    };
    for tolerant in [false, true] {
        if let Ok(imp) = import::import_window(text, tolerant, window) {
            let _ = imp.metrics();
            // The replay workload must be one the simulator accepts.
            let replay = imp.replay_workload();
            // (A trace of the idle task alone has no task to replay.)
            let parsed = Workload::from_rtapp("replay.json", &replay);
            if let (Err(e), false) = (parsed, imp.tasks.is_empty()) {
                panic!("replay workload refused: {e}\n{replay}");
            }
            let _ = ftrace::render(&imp.data);
            let _ = perfetto::encode(&imp.data);
        }
    }
});
