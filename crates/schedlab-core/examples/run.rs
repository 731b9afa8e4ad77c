//! `cargo run --example run -- FILE [eevdf|cfs] [CPUS]`: print a run's metrics as JSON.
//! Environment: `SCHEDLAB_FTRACE` (print the trace instead), `SCHEDLAB_HZ`
//! (tick rate), `SCHEDLAB_ZERO_COSTS` (no wakeup/switch costs) and
//! `SCHEDLAB_REPEAT` (run N times, print the last: for profilers) and
//! `SCHEDLAB_PERFETTO=PATH` (also write the trace there as Perfetto) and
//! `SCHEDLAB_TRACE_ONLY` (record the trace, print the metrics: the cost of
//! recording alone; with `SCHEDLAB_PERFETTO`, print them after writing) and
//! `SCHEDLAB_SET=name=value,...` (tunables) and
//! `SCHEDLAB_NO_COUNTERS` (a trace of the scheduler events alone:
//! `SimConfig::trace_counters` off) and `SCHEDLAB_DL_POLICY` (the deadline
//! class's order: `edf`, `llf`, `illf`) and `SCHEDLAB_SMT` (hardware
//! threads a core) and `SCHEDLAB_SEED`.
use schedlab_core::config::SimConfig;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: run FILE [eevdf|cfs] [CPUS]");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let env_num = |k: &str| std::env::var(k).ok().and_then(|s| s.parse::<u32>().ok());
    let perfetto = std::env::var("SCHEDLAB_PERFETTO").ok();
    let trace_only = std::env::var("SCHEDLAB_TRACE_ONLY").is_ok();
    let defaults = SimConfig::default();
    let mut cfg = SimConfig {
        scheduler: args.get(2).map_or("eevdf", |s| s.as_str()).into(),
        cpus: args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1),
        trace: std::env::var("SCHEDLAB_FTRACE").is_ok() || trace_only || perfetto.is_some(),
        trace_counters: std::env::var("SCHEDLAB_NO_COUNTERS").is_err(),
        zero_costs: std::env::var("SCHEDLAB_ZERO_COSTS").is_ok(),
        hz: env_num("SCHEDLAB_HZ").unwrap_or(defaults.hz),
        dl_policy: std::env::var("SCHEDLAB_DL_POLICY").unwrap_or(defaults.dl_policy.clone()),
        smt: env_num("SCHEDLAB_SMT").map_or(defaults.smt, |n| n as usize),
        seed: env_num("SCHEDLAB_SEED").map_or(defaults.seed, u64::from),
        ..defaults
    };
    for kv in std::env::var("SCHEDLAB_SET").unwrap_or_default().split(',') {
        if let Some((k, v)) = kv.split_once('=') {
            let Ok(v) = v.parse::<i64>() else {
                eprintln!("SCHEDLAB_SET: {kv}: expected name=integer");
                std::process::exit(2)
            };
            cfg.set.push((k.to_string(), v));
        }
    }
    for _ in 1..env_num("SCHEDLAB_REPEAT").unwrap_or(1) {
        let _ = schedlab_core::simulate(path, &text, cfg.clone());
    }
    match schedlab_core::simulate(path, &text, cfg) {
        Ok(r) if perfetto.is_some() => {
            let out = perfetto.unwrap_or_default();
            let mut f = std::io::BufWriter::new(std::fs::File::create(&out).unwrap_or_else(|e| {
                eprintln!("{out}: {e}");
                std::process::exit(2)
            }));
            if let Some(t) = &r.trace {
                if let Err(e) = schedlab_core::trace::perfetto::write(t, &mut f) {
                    eprintln!("{out}: {e}");
                    std::process::exit(2)
                }
            }
            if trace_only {
                let json = serde_json::to_string_pretty(&r.metrics).unwrap_or_default();
                println!("{json}");
            }
        }
        Ok(r) if r.trace.is_some() && !trace_only => {
            if let Some(t) = &r.trace {
                print!("{}", schedlab_core::trace::ftrace::render(t));
            }
        }
        Ok(r) => println!(
            "{}",
            serde_json::to_string_pretty(&r.metrics).unwrap_or_default()
        ),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2)
        }
    }
}
