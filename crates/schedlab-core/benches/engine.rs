//! Engine throughput: the benchmark workload (1,000 CPU-bound tasks,
//! nice −20..19, 8 CPUs, ticks, balancing and metrics on) for a shorter
//! simulated time per iteration; `python -m schedlab.bench` runs the full
//! 60 s and prints events per second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab_core::config::SimConfig;
use schedlab_core::engine::Simulator;
use schedlab_core::workload::Workload;

/// 1,000 hogs with nice cycling through −20..19.
pub fn hogs_workload(n: usize, secs: u64) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            format!(
                "\"hog{i}\": {{\"priority\": {}, \"run\": 1000000}}",
                (i % 40) as i64 - 20
            )
        })
        .collect();
    format!(
        "{{\"global\": {{\"duration\": {secs}}}, \"tasks\": {{{}}}}}",
        tasks.join(", ")
    )
}

fn bench(c: &mut Criterion) {
    let text = hogs_workload(1000, 2);
    let mut g = c.benchmark_group("hogs1000_8cpu_2s");
    g.sample_size(10);
    for kind in ["eevdf", "cfs"] {
        let cfg = SimConfig {
            scheduler: kind.into(),
            cpus: 8,
            ..SimConfig::default()
        };
        let wl = Workload::from_rtapp("bench", &text).expect("bench workload parses");
        let events = Simulator::new(wl.clone(), cfg.clone())
            .and_then(|s| s.run())
            .map(|r| r.metrics.events + r.metrics.context_switches)
            .expect("bench workload runs");
        g.throughput(Throughput::Elements(events));
        g.bench_function(kind, |b| {
            b.iter(|| {
                Simulator::new(wl.clone(), cfg.clone())
                    .and_then(|s| s.run())
                    .expect("runs")
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
