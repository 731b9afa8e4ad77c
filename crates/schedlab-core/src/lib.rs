//! # schedlab-core
//!
//! A deterministic discrete-event simulator of the Linux CPU scheduler.
//!
//! * **Workloads** are rt-app JSON files ([`workload`]).
//! * **The engine** ([`engine`]) runs them on a simulated machine
//!   ([`topology`]) with integer-nanosecond time ([`clock`]), an event queue
//!   ordered by (time, sequence) ([`event`]) and one seeded RNG ([`rng`]).
//! * **Scheduling classes** ([`class`]) mirror `struct sched_class`; the fair
//!   class implements CFS (Linux 6.1) and EEVDF (Linux 6.12) with SMP
//!   placement and load balancing, each rule citing ../shared/spec.
//! * **Metrics** ([`metrics`]) are one self-describing structure;
//!   **traces** ([`trace`]) export to Perfetto and ftrace text.
//!
//! ```
//! use schedlab_core::{config::SimConfig, engine::Simulator, workload::Workload};
//! let wl = Workload::from_rtapp("demo", r#"{"global": {"duration": 1},
//!     "tasks": {"a": {"run": 1000}, "b": {"run": 1000, "priority": 5}}}"#).unwrap();
//! let r = Simulator::new(wl, SimConfig::default()).unwrap().run().unwrap();
//! assert!(r.metrics.tasks[0].cpu_time_us > r.metrics.tasks[1].cpu_time_us);
//! ```
#![warn(missing_docs)]

pub mod class;
pub mod clock;
pub mod config;
pub mod cpuset;
pub mod engine;
pub mod event;
pub mod exectime;
pub mod histogram;
pub mod machine;
pub mod metrics;
pub mod pelt;
pub mod plugin;
pub mod policy;
pub mod prefetch;
pub mod registry;
pub mod rng;
pub mod runqueue;
pub mod spread;
pub mod stats;
pub mod task;
pub mod topology;
pub mod trace;
pub mod tunable;
pub mod workload;

use config::SimConfig;
use engine::{SimError, Simulator};
use metrics::RunResult;
use workload::Workload;

/// Parse and simulate in one call.
pub fn simulate(source: &str, text: &str, cfg: SimConfig) -> Result<RunResult, SimError> {
    let wl = Workload::from_rtapp(source, text)?;
    Simulator::new(wl, cfg)?.run()
}
