//! `cargo run --example run -- FILE [eevdf|cfs] [CPUS]`: print a run's metrics as JSON.
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
    let cfg = SimConfig {
        scheduler: args.get(2).map_or("eevdf", |s| s.as_str()).into(),
        cpus: args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1),
        trace: std::env::var("SCHEDLAB_FTRACE").is_ok(),
        ..SimConfig::default()
    };
    match schedlab_core::simulate(path, &text, cfg) {
        Ok(r) if r.trace.is_some() => {
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
