//! The ext class's tunables and the settings made from them.

use super::state::OnError;
use crate::tunable::{Tunable, TunableSet};

/// The ext class's tunables, shared by every sched_ext scheduler.
pub const EXT_TUNABLES: &[Tunable] = &[
    Tunable {
        name: "ext_on_error",
        default: 0,
        min: 0,
        max: 1,
        unit: "bool",
        doc: "when the sched_ext policy errors or stalls: 0 stop the run with the error, 1 the kernel's behaviour (disable the policy, its tasks go back to the fair class, the run goes on and the exit is listed in the warnings)",
    },
    Tunable {
        name: "ext_timeout_ms",
        default: 0,
        min: 0,
        max: 30_000,
        unit: "ms",
        doc: "watchdog timeout: a runnable ext task that has not run for this long aborts the policy (0: the policy's ops.timeout_ms, itself 30000 ms by default)",
    },
];

/// The `partial` tunable of a scheduler that, like the kernel's examples,
/// can switch all fair-policy tasks or only SCHED_EXT ones (`-p`).
pub const PARTIAL_TUNABLE: &[Tunable] = &[Tunable {
    name: "partial",
    default: 0,
    min: 0,
    max: 1,
    unit: "bool",
    doc: "-p (SCX_OPS_SWITCH_PARTIAL): only SCHED_EXT tasks go to the policy; 0 switches SCHED_OTHER, SCHED_BATCH and SCHED_IDLE too",
}];

/// `ops.flags` for a scheduler's `partial` setting.
pub fn switch_flags(partial: bool) -> u64 {
    if partial {
        super::SCX_OPS_SWITCH_PARTIAL
    } else {
        0
    }
}

/// Class-level settings (the ext tunables).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExtParams {
    /// `ext_on_error`.
    pub on_error: OnError,
    /// `ext_timeout_ms`: overrides the policy's `timeout_ms()` when set.
    pub timeout_ms: Option<u32>,
}

impl ExtParams {
    /// From the run's tunables (`EXT_TUNABLES`).
    pub fn from_tunables(t: &TunableSet) -> Self {
        ExtParams {
            on_error: if t.get("ext_on_error").unwrap_or(0) != 0 {
                OnError::Fallback
            } else {
                OnError::Fail
            },
            timeout_ms: t
                .get("ext_timeout_ms")
                .filter(|v| *v > 0)
                .map(|v| v.min(u32::MAX as i64) as u32),
        }
    }
}
