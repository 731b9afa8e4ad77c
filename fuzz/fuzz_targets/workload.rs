//! `Workload::from_rtapp` on any text, then a short simulation of what
//! parses: Ok or a clear error, never a panic, abort or hang. The run is
//! bounded in simulated time (50 ms), events and threads, so one input
//! cannot take long.
#![no_main]

use libfuzzer_sys::fuzz_target;
use schedlab_core::config::SimConfig;
use schedlab_core::engine::Simulator;
use schedlab_core::workload::Workload;

const SIM_NS: u64 = 50_000_000;
const MAX_THREADS: u64 = 64;
const MAX_EVENTS: u64 = 200_000;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(wl) = Workload::from_rtapp("fuzz.json", text) else {
        return;
    };
    let threads: u64 = wl.tasks.iter().map(|t| u64::from(t.instances)).sum();
    if threads > MAX_THREADS {
        return;
    }
    let cfg = SimConfig {
        cpus: 2,
        duration: Some(SIM_NS),
        // Forks stop at the same bound as the threads checked between steps
        // (a fork loop reached the engine's 100,000 within one step).
        set: vec![("max_threads".into(), (4 * MAX_THREADS) as i64)],
        ..SimConfig::default()
    };
    let Ok(mut sim) = Simulator::new(wl, cfg) else {
        return;
    };
    let mut limit = 0;
    while limit < SIM_NS {
        limit += 1_000_000;
        match sim.run_until(limit) {
            Ok(false) => {}
            Ok(true) | Err(_) => break,
        }
        if sim.m.stats.events > MAX_EVENTS || sim.m.tasks.len() as u64 > 4 * MAX_THREADS {
            return;
        }
    }
    let _ = sim.finish();
});
