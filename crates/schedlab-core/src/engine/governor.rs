//! CPU frequency governors (cpufreq), part of the execution-time model:
//! they set each CPU's current frequency, which `run` work progresses by
//! (exectime.rs). Policies only read the result.
//!
//! * `userspace` (default): the frequencies given with `--freq`, fixed.
//! * `performance` / `powersave`: the highest / lowest frequency level.
//! * `schedule:T=MHZ,...`: a userspace script, every CPU set to MHZ at T s.
//! * `ondemand` (drivers/cpufreq/cpufreq_ondemand.c, simplified): every
//!   sampling period (10 ms) each CPU's load over the period is measured;
//!   above the up threshold (80 %) it jumps to f_max, otherwise it goes to
//!   the lowest level at or above f_min + load·(f_max − f_min)
//!   (`od_update`, CPUFREQ_RELATION_L). No sampling_down_factor, no
//!   powersave_bias, per-CPU policies.
//!
//! Frequency levels come from `--freq-levels` (MHz); by default the CPU's
//! maximum times 0.4, 0.5, ..., 1.0.

use crate::clock::{Ns, MSEC, SEC};
use crate::event::EventKind;
use serde::Serialize;

/// ondemand's sampling period.
pub const SAMPLING_PERIOD: Ns = 10 * MSEC;
/// ondemand's up_threshold, percent.
pub const UP_THRESHOLD: u64 = 80;

/// A governor.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Governor {
    /// Fixed frequencies (`--freq`).
    #[default]
    Userspace,
    /// Highest level.
    Performance,
    /// Lowest level.
    Powersave,
    /// Utilisation-driven (ondemand).
    Ondemand,
    /// Every CPU to the given kHz at the given times.
    Schedule(Vec<(Ns, u64)>),
}

impl Governor {
    /// Parse `userspace`, `performance`, `powersave`, `ondemand` or
    /// `schedule:T=MHZ,T=MHZ` (T in seconds, non-decreasing).
    pub fn parse(s: &str) -> Result<Governor, String> {
        Ok(match s {
            "userspace" => Governor::Userspace,
            "performance" => Governor::Performance,
            "powersave" => Governor::Powersave,
            "ondemand" => Governor::Ondemand,
            _ => {
                let Some(list) = s.strip_prefix("schedule:") else {
                    return Err(format!(
                        "unknown governor \"{s}\"; expected userspace, performance, powersave, ondemand or schedule:T=MHZ,..."
                    ));
                };
                let mut steps = vec![];
                for item in list.split(',').filter(|x| !x.is_empty()) {
                    let bad =
                        || format!("governor schedule: expected SECONDS=MHZ, found \"{item}\"");
                    let (t, f) = item.split_once('=').ok_or_else(bad)?;
                    let t: f64 = t.trim().parse().map_err(|_| bad())?;
                    let f: u64 = f.trim().parse().map_err(|_| bad())?;
                    if !(t >= 0.0 && t.is_finite()) || f == 0 {
                        return Err(bad());
                    }
                    if f > crate::topology::MAX_FREQ_MHZ {
                        return Err(format!(
                            "governor schedule: \"{item}\": frequencies are at most {} MHz",
                            crate::topology::MAX_FREQ_MHZ
                        ));
                    }
                    let at = (t * SEC as f64).round() as Ns;
                    if steps.last().is_some_and(|(p, _)| *p > at) {
                        return Err(format!(
                            "governor schedule: times must not decrease (\"{item}\")"
                        ));
                    }
                    steps.push((at, f * 1000));
                }
                if steps.is_empty() {
                    return Err("governor schedule: no steps".into());
                }
                Governor::Schedule(steps)
            }
        })
    }

    /// Name for reports.
    pub fn name(&self) -> &'static str {
        match self {
            Governor::Userspace => "userspace",
            Governor::Performance => "performance",
            Governor::Powersave => "powersave",
            Governor::Ondemand => "ondemand",
            Governor::Schedule(_) => "schedule",
        }
    }
}

/// Frequency levels (kHz, ascending) of a CPU with maximum `max_khz`.
pub fn levels(max_khz: u64, given_mhz: &[u64]) -> Vec<u64> {
    let mut v: Vec<u64> = if given_mhz.is_empty() {
        (4..=10).map(|k| max_khz * k / 10).collect()
    } else {
        given_mhz
            .iter()
            .map(|m| m * 1000)
            .filter(|k| *k <= max_khz)
            .collect()
    };
    if !v.contains(&max_khz) {
        v.push(max_khz);
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// ondemand's choice for a CPU with `load` percent busy over the last period.
pub fn ondemand_target(load: u64, levels: &[u64]) -> u64 {
    let (lo, hi) = (
        levels.first().copied().unwrap_or(0),
        levels.last().copied().unwrap_or(0),
    );
    if load > UP_THRESHOLD {
        return hi;
    }
    let want = lo + load * (hi - lo) / 100;
    levels.iter().copied().find(|l| *l >= want).unwrap_or(hi)
}

impl super::Simulator {
    /// Set initial frequencies and arm the governor (engine/governor.rs).
    pub(crate) fn start_governor(&mut self) {
        let n = self.m.nr_cpus();
        self.freq_levels = (0..n)
            .map(|c| levels(self.m.topo.cpu(c).max_freq_khz, &self.cfg.freq_levels_mhz))
            .collect();
        self.gov_busy = vec![0; n];
        for cpu in 0..n {
            let lv = &self.freq_levels[cpu];
            let f = match self.cfg.governor {
                Governor::Performance | Governor::Ondemand => lv.last().copied(),
                Governor::Powersave => lv.first().copied(),
                _ => None,
            };
            if let Some(f) = f {
                self.m.rqs[cpu].freq_khz = f;
            }
            self.trace_freq(cpu);
        }
        match &self.cfg.governor {
            Governor::Ondemand => self.events.push(SAMPLING_PERIOD, EventKind::GovernorTick),
            Governor::Schedule(steps) => {
                if let Some((at, _)) = steps.first() {
                    self.events.push(*at, EventKind::GovernorTick);
                }
            }
            _ => {}
        }
    }

    /// The governor's periodic sample (ondemand) or next step (schedule).
    pub(crate) fn governor_tick(&mut self) {
        let now = self.m.now;
        match self.cfg.governor.clone() {
            Governor::Ondemand => {
                for cpu in 0..self.m.nr_cpus() {
                    let rq = &self.m.rqs[cpu];
                    let running = if rq.curr.is_some() {
                        now - rq.curr_since
                    } else {
                        0
                    };
                    let busy = rq.busy_ns + running;
                    let load = (busy - self.gov_busy[cpu].min(busy)) * 100 / SAMPLING_PERIOD;
                    self.gov_busy[cpu] = busy;
                    let f = ondemand_target(load.min(100), &self.freq_levels[cpu]);
                    self.set_freq(cpu, f);
                }
                // Sampling alone never keeps a run going (like the tick).
                let alive = self.events.peek_time().is_some()
                    || self.m.rqs.iter().any(|r| r.seg_end.is_some());
                if alive {
                    self.events
                        .push(now + SAMPLING_PERIOD, EventKind::GovernorTick);
                }
            }
            Governor::Schedule(steps) => {
                while let Some(&(_, khz)) = steps.get(self.gov_step).filter(|(at, _)| *at <= now) {
                    for cpu in 0..self.m.nr_cpus() {
                        let f = khz.min(self.m.topo.cpu(cpu).max_freq_khz);
                        self.set_freq(cpu, f);
                    }
                    self.gov_step += 1;
                }
                if let Some((at, _)) = steps.get(self.gov_step) {
                    self.events.push(*at, EventKind::GovernorTick);
                }
            }
            _ => {}
        }
    }

    /// Change `cpu`'s frequency at `m.now`: work done so far is accounted at
    /// the old rate and the running segment re-timed at the new one.
    pub(crate) fn set_freq(&mut self, cpu: usize, khz: u64) {
        if self.m.rqs[cpu].freq_khz == khz {
            return;
        }
        self.settle(cpu);
        // The rate enters the quiet horizon (a DEADLINE job's tick).
        self.quiet_touch(cpu);
        for c in 0..self.classes.len() {
            self.classes.get(c).update_curr(&mut self.m, cpu);
        }
        let now = self.m.now;
        let rq = &mut self.m.rqs[cpu];
        let (old, since) = (rq.freq_khz, rq.freq_since);
        match rq.freq_time.iter_mut().find(|(f, _)| *f == old) {
            Some(e) => e.1 += now - since,
            None => rq.freq_time.push((old, now - since)),
        }
        rq.freq_khz = khz;
        rq.freq_since = now;
        self.trace_freq(cpu);
        self.retime_segment(cpu);
    }

    /// While tracing, `cpu`'s frequency (kHz) as a counter (the kernel's
    /// power:cpu_frequency).
    pub(crate) fn trace_freq(&mut self, cpu: usize) {
        let khz = self.m.rqs[cpu].freq_khz;
        self.m
            .trace(cpu, crate::trace::TraceEvent::CpuFrequency { khz });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_targets() {
        assert_eq!(Governor::parse("ondemand"), Ok(Governor::Ondemand));
        assert_eq!(
            Governor::parse("schedule:0=2530,1.5=1200"),
            Ok(Governor::Schedule(vec![
                (0, 2_530_000),
                (1_500_000_000, 1_200_000)
            ]))
        );
        assert!(Governor::parse("schedule:2=1000,1=2000").is_err());
        assert!(Governor::parse("turbo").is_err());
        let lv = levels(2_000_000, &[]);
        assert_eq!(lv.first(), Some(&800_000));
        assert_eq!(ondemand_target(90, &lv), 2_000_000);
        assert_eq!(ondemand_target(0, &lv), 800_000);
        assert_eq!(ondemand_target(50, &lv), 1_400_000);
    }
}
