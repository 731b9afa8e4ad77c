//! The kernel's own per-thread counters, read by the thread itself at the
//! start and end of its program, as a cross-check of the trace
//! (host.md §1.5): `/proc/thread-self/schedstat` (run time, runqueue wait,
//! timeslices) and the context-switch counts of `/proc/thread-self/status`.

/// One reading; the worker reports end − start.
#[derive(Debug, Default, Clone, Copy)]
pub struct Counters {
    pub run_ns: u64,
    pub run_delay_ns: u64,
    pub timeslices: u64,
    pub nvcsw: u64,
    pub nivcsw: u64,
}

impl Counters {
    pub fn read() -> Counters {
        let mut c = Counters::default();
        if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
            let v: Vec<u64> = s
                .split_whitespace()
                .filter_map(|x| x.parse().ok())
                .collect();
            if let [run, delay, slices, ..] = v[..] {
                (c.run_ns, c.run_delay_ns, c.timeslices) = (run, delay, slices);
            }
        }
        if let Ok(s) = std::fs::read_to_string("/proc/thread-self/status") {
            for line in s.lines() {
                let val = || line.split_whitespace().nth(1).and_then(|x| x.parse().ok());
                if line.starts_with("voluntary_ctxt_switches:") {
                    c.nvcsw = val().unwrap_or(0);
                } else if line.starts_with("nonvoluntary_ctxt_switches:") {
                    c.nivcsw = val().unwrap_or(0);
                }
            }
        }
        c
    }

    pub fn since(self, start: Counters) -> serde_json::Value {
        serde_json::json!({
            "run_ns": self.run_ns.saturating_sub(start.run_ns),
            "run_delay_ns": self.run_delay_ns.saturating_sub(start.run_delay_ns),
            "timeslices": self.timeslices.saturating_sub(start.timeslices),
            "nvcsw": self.nvcsw.saturating_sub(start.nvcsw),
            "nivcsw": self.nivcsw.saturating_sub(start.nivcsw),
        })
    }
}
