//! `cargo run --release --example bench_hogs -- [SCHED,...] [TASKS] [SECONDS] [CPUS] [REPEAT]`:
//! python/schedlab/bench.py's workload (hogs with nice -20..19) timed
//! around `schedlab_core::simulate` (a name may carry tunables:
//! `cacule:autogroup=0`) (best of REPEAT runs, default 3), with each scheduler's wall time per
//! event (engine events + context switches) relative to eevdf's.
use schedlab_core::config::SimConfig;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut names: Vec<String> = args
        .get(1)
        .map_or("eevdf,cacule,tt", |s| s.as_str())
        .split(',')
        .map(String::from)
        .collect();
    if !names.iter().any(|n| n == "eevdf") {
        names.insert(0, "eevdf".into());
    }
    let arg = |i: usize, d: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (n, seconds, cpus, repeat) = (arg(2, 1000), arg(3, 60), arg(4, 8), arg(5, 3));
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#""hog{i}": {{"priority": {}, "run": 1000000}}"#,
                (i % 40) as i64 - 20
            )
        })
        .collect();
    let wl = format!(
        r#"{{"global": {{"duration": {seconds}}}, "tasks": {{{}}}}}"#,
        tasks.join(", ")
    );
    let mut eevdf_per_event = None;
    for name in names {
        // `name:key=value:...` sets tunables (`cacule:autogroup=0`).
        let mut parts = name.split(':');
        let scheduler = parts.next().unwrap_or_default().to_string();
        let set = parts
            .map(|kv| {
                let (k, v) = kv.split_once('=').expect("tunable as key=value");
                (k.to_string(), v.parse().expect("integer tunable value"))
            })
            .collect();
        let cfg = SimConfig {
            scheduler,
            set,
            cpus,
            ..SimConfig::default()
        };
        let mut wall = f64::INFINITY;
        let mut r = None;
        for _ in 0..repeat.max(1) {
            let t0 = Instant::now();
            r = Some(schedlab_core::simulate("bench", &wl, cfg.clone()).expect("runs"));
            wall = wall.min(t0.elapsed().as_secs_f64());
        }
        let r = r.expect("one run");
        let ev = r.metrics.events + r.metrics.context_switches;
        let per = wall / ev as f64;
        let base = *eevdf_per_event.get_or_insert(per);
        println!(
            "{name:8} {ev:>10} events in {wall:7.2} s: {:>10.0} events/s, {:5.2}x eevdf's time per event",
            ev as f64 / wall,
            per / base
        );
    }
}
