//! The rt-app interpreter: what the current task does, event by event
//! (../shared/formats.md §1.2 for each event's meaning).
//!
//! `step` runs zero-time events (locks, signals, forks, ...) until the task
//! starts busy work (`run`, `runtime`), blocks, or exits. Busy work ends
//! with a `SegmentEnd` event, and the task steps again.

use super::program::Op;
use super::{SimError, Simulator};
use crate::class::Waker;
use crate::clock::Ns;
use crate::stats::Activation;
use crate::task::{Busy, TaskId};
use crate::workload::{Policy, TimerMode};

/// A `run` segment is sized so that it would end before the end of
/// simulated time even if its CPU became this many times slower while it
/// runs (a lower frequency, a slower CPU after a migration).
const CHUNK_SLOWDOWN: u128 = 1 << 16;

/// Margin on the u128 products of core.rs's segment timing (see
/// `next_work_chunk`): at the default machine a chunk is about 20 minutes.
const CHUNK_MARGIN: u128 = 64;

/// Simulated time saturates: an instant past `Ns::MAX` is `Ns::MAX`, the
/// end of simulated time, which never comes (engine/mod.rs `run_until`):
/// a sleep, timer or `runtime` that would end there never ends.
pub(crate) fn later(now: Ns, ns: Ns) -> Ns {
    now.saturating_add(ns)
}

/// Per CPU, what `next_work_chunk` bounds a chunk by at the unit rate
/// (`Simulator::unit_progress_rate`): there num = den = 1024 · max
/// frequency · PPM · the calibration's denominator, and the bound is
/// `u128::MAX / num / CHUNK_MARGIN` as in the general case (above `room`,
/// so no bound, when num < 2^64).
pub(super) fn unit_chunk_rooms(
    topo: &crate::topology::Topology,
    calib_rate: (u64, u64),
) -> Vec<u64> {
    (0..topo.nr_cpus())
        .map(|c| {
            let num = crate::topology::CAPACITY_SCALE as u128
                * topo.cpu(c).max_freq_khz as u128
                * crate::exectime::PPM as u128
                * calib_rate.1 as u128;
            (u128::MAX / num.max(1) / CHUNK_MARGIN).min(u64::MAX as u128) as u64
        })
        .collect()
}

impl Simulator {
    /// Scale an rt-app `run` duration into reference work units.
    fn run_work(&self, ns: Ns) -> u64 {
        match self.ns_per_loop {
            // rt-app: floor(t·1000 / pLoad) loops, each pLoad ns at full speed.
            Some(p) => (ns / p) * p,
            None => ns,
        }
    }

    /// Hand `t` the next chunk of its `run` work (`prog.work_pending`): as
    /// much as can end before the end of simulated time at
    /// [`CHUNK_SLOWDOWN`] times slower than the current rate. The rest
    /// stays pending and is handed over when this chunk ends; work that
    /// cannot end before the end of time keeps the CPU until then.
    fn next_work_chunk(&mut self, t: TaskId) {
        let left = std::mem::take(&mut self.m.tasks[t].prog.work_pending);
        if left == 0 {
            return;
        }
        let cpu = self.m.tasks[t].cpu;
        if self.unit_progress_rate(cpu, t) {
            // num = den below: the same hand-out without the u128 products
            // (room·num/den = room, bounded by the products' room).
            let room = (Ns::MAX - self.m.now) / CHUNK_SLOWDOWN as Ns;
            self.hand_out_work(t, left, room.min(self.unit_chunk_room[cpu]));
            return;
        }
        let (n, d) = crate::exectime::progress_rate(
            self.m.topo.cpu(cpu),
            self.m.freq(cpu),
            self.m.tasks[t].mem_ppm,
        );
        let (cn, cd) = self.calib_rate;
        let (mut num, mut den) = (n * cd as u128, (d * cn as u128).max(1));
        let room = (Ns::MAX - self.m.now) as u128 / CHUNK_SLOWDOWN;
        if num == den && num < 1 << 64 {
            // At the calibration rate, what the general case below gives
            // without its two u128 divisions: room·num/den = room (the
            // shift keeps num = den), and product_room ≥ 2^128/2^64/2^6 =
            // 2^58 exceeds room (< 2^48).
            self.hand_out_work(t, left, room as u64);
            return;
        }
        // core.rs times a segment as `work * den / num` and settles it as
        // `elapsed * num / den` in u128, with products near 2^82 on
        // ordinary machines: a chunk is also kept small enough for those
        // products (with CHUNK_MARGIN for a CPU whose rate terms are larger).
        let product_room = u128::MAX / num.max(den) / CHUNK_MARGIN;
        // Only the ratio matters, and only roughly (CHUNK_SLOWDOWN is the
        // margin): keep both under 2^60 so `room * num` cannot overflow.
        // (One shift by k, the loop `num >>= 1; den = max(den >> 1, 1)`
        // until both are under 2^60 done at once.)
        let bits = |x: u128| 128 - x.leading_zeros();
        let k = bits(num).max(bits(den)).saturating_sub(60);
        if k > 0 {
            num >>= k;
            den = (den >> k).max(1);
        }
        let fits = (room * num / den).min(product_room).min(u64::MAX as u128) as u64;
        self.hand_out_work(t, left, fits);
    }

    /// Hand `t` a chunk of at most `fits` of its `left` work (none fits:
    /// it keeps the CPU until the end of time).
    fn hand_out_work(&mut self, t: TaskId, left: u64, fits: u64) {
        let busy = if fits == 0 {
            Busy::Until(Ns::MAX)
        } else {
            let chunk = left.min(fits);
            self.m.tasks[t].prog.work_pending = left - chunk;
            Busy::Work(chunk)
        };
        self.m.tasks[t].busy = Some(busy);
    }

    /// Current event of `t`, moving across phase and loop boundaries and
    /// applying phase attributes. `None` when the program is finished.
    fn current_event(&mut self, t: TaskId) -> Option<Op> {
        let program = self.m.tasks[t].prog.program as usize;
        loop {
            // The flat copy of the programs (engine/program.rs).
            let d = self.programs.defs[program];
            let p = &self.m.tasks[t].prog;
            if let Some(l) = d.loops {
                if p.loops_done >= l {
                    return None;
                }
            }
            let phase = *self.programs.phase(program, p.phase);
            if p.event < phase.events {
                if !p.phase_applied {
                    self.apply_phase_attrs(t);
                }
                let event = self.m.tasks[t].prog.event;
                return Some(self.programs.event(&phase, event));
            }
            let nphases = d.phases;
            let phase_loops = phase.loops;
            let p = &mut self.m.tasks[t].prog;
            p.event = 0;
            p.phase_loops_done += 1;
            if p.phase_loops_done >= phase_loops {
                p.phase_loops_done = 0;
                p.phase += 1;
                // Entering another phase applies its attributes. A
                // one-phase program re-enters the phase it is in, whose
                // attributes are the task's already (only this function
                // sets them): nothing to apply, every loop.
                p.phase_applied = nphases == 1;
                if p.phase >= nphases {
                    p.phase = 0;
                    p.loops_done += 1;
                    self.m.stats.tasks[t].loops_done = p.loops_done;
                }
            }
        }
    }

    fn apply_phase_attrs(&mut self, t: TaskId) {
        let (def, phase) = (self.m.tasks[t].def, self.m.tasks[t].prog.phase);
        self.m.tasks[t].prog.phase_applied = true;
        let a = self.attrs_of(def, phase);
        let policy = a.policy.unwrap_or(self.wl.default_policy);
        let (nice, rt_priority) = policy.split_priority(a.priority);
        let slice = a.dl_runtime.filter(|s| *s > 0);
        let affinity_req = self.cpuset_of(&a);
        let affinity = self.m.effective_affinity(affinity_req);
        let group = self.group_of(def, &a);
        let weight = self.task_weight(self.m.tasks[t].process, policy, nice);
        let dl = crate::task::DlAttr::from_attrs(policy, &a);
        let mem_ppm = a.memory_ppm.unwrap_or(0);
        if self.m.tasks[t].mem_ppm != mem_ppm {
            // Not a scheduling attribute: the running segment is re-timed.
            let cpu = self.m.tasks[t].cpu;
            self.settle(cpu);
            self.m.tasks[t].mem_ppm = mem_ppm;
        }
        let task = &self.m.tasks[t];
        let same = task.policy == policy
            && task.dl == dl
            && task.nice == nice
            && task.rt_priority == rt_priority
            && task.custom_slice == slice
            && task.affinity_req == affinity_req
            && task.group == group;
        if same {
            return;
        }
        let old_bw = if task.policy == Policy::Deadline {
            task.dl.bw()
        } else {
            0
        };
        let new_bw = if policy == Policy::Deadline {
            dl.bw()
        } else {
            0
        };
        if old_bw != new_bw && self.classes.dl_admission && !self.admit_dl(t, old_bw, new_bw) {
            return;
        }
        self.m.any_sched_idle |= policy == Policy::Idle;
        self.change_running_task(t, |task| {
            task.policy = policy;
            task.nice = nice;
            task.rt_priority = rt_priority;
            task.dl = dl;
            task.weight = weight;
            task.custom_slice = slice;
            task.affinity = affinity;
            task.affinity_req = affinity_req;
            task.group = group;
        });
    }

    fn advance(&mut self, t: TaskId) {
        self.m.tasks[t].prog.event += 1;
    }

    fn wake(&mut self, waker: TaskId, t: TaskId) {
        let cpu = self.m.tasks[waker].cpu;
        self.try_to_wake_up(
            t,
            Waker {
                cpu,
                task: Some(waker),
            },
        );
    }

    /// Take mutex `name` for `t`; false (and `t` blocked) if it is held.
    fn try_lock(&mut self, t: TaskId, id: usize) -> bool {
        let mx = &mut self.sync.mutexes[id];
        match mx.owner {
            None => {
                mx.owner = Some(t);
                true
            }
            Some(_) => {
                if !mx.waiters.contains(&t) {
                    mx.waiters.push_back(t);
                }
                false
            }
        }
    }

    fn unlock(&mut self, t: TaskId, id: usize) {
        let mx = &mut self.sync.mutexes[id];
        mx.owner = None;
        if let Some(w) = mx.waiters.pop_front() {
            self.wake(t, w);
        }
    }

    /// rt-app `timer`: returns the time to sleep until, if any.
    fn timer(
        &mut self,
        t: TaskId,
        timer: u32,
        own: bool,
        period: Ns,
        mode: TimerMode,
    ) -> Option<Ns> {
        let now = self.m.now;
        let start = self.task_start[t];
        let prev = if own {
            self.m.tasks[t]
                .own_timers
                .iter()
                .find(|(n, _)| *n == timer)
                .map(|x| x.1)
        } else {
            self.sync.timers[timer as usize]
        };
        let release = prev.unwrap_or(start);
        let mut next = later(release, period);
        let slack = (next as i128 - now as i128).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        let task = &self.m.tasks[t];
        let rel_deadline = if task.policy == Policy::Deadline && task.dl.deadline > 0 {
            task.dl.deadline
        } else {
            period
        };
        let st = &mut self.m.stats.tasks[t];
        st.activations.push(Activation {
            at: now,
            slack,
            release,
            start: st.job_start.take().unwrap_or(release),
            deadline: later(release, rel_deadline),
        });
        let wait = now < next;
        if !wait && mode == TimerMode::Relative {
            next = now;
        }
        // The next job: released at `next` (at once if already late).
        st.job = Some((next.min(now.max(next)), rel_deadline));
        if wait {
            // A release past the last representable time (`later`
            // saturated: a period near the input limit, advanced again by
            // another task sharing the timer) never comes within a run:
            // nothing is awaited, and the metrics read the job's release,
            // the same saturated time, as not pending either.
            st.awaiting.set((next != Ns::MAX).then_some(next));
        } else {
            st.job_start.set(Some(now));
        }
        if own {
            let timers = &mut self.m.tasks[t].own_timers;
            match timers.iter_mut().find(|(n, _)| *n == timer) {
                Some(e) => e.1 = next,
                None => timers.push((timer, next)),
            }
        } else {
            self.sync.timers[timer as usize] = Some(next);
        }
        wait.then_some(next)
    }

    /// Count one more step (a program event, a class timer) at the
    /// current instant; true once there are more than
    /// `max_events_per_instant` of them: a loop that never lets simulated
    /// time advance (the run would never end).
    pub(crate) fn one_more_at_this_instant(&mut self) -> bool {
        if self.m.now != self.last_step_time {
            self.last_step_time = self.m.now;
            self.steps_without_time = 0;
        }
        self.steps_without_time += 1;
        self.steps_without_time > self.limits.events_per_instant
    }

    /// The error of a class whose timers fire again and again at one
    /// instant ([`Self::one_more_at_this_instant`]).
    pub(crate) fn timers_without_time(&self, class: &str) -> SimError {
        SimError::Runtime(format!(
            "{}: the {class} class's timers keep firing without time passing at t={} ns: more than {} events at one instant (tunable max_events_per_instant); a timer re-armed for now never lets the run advance",
            self.wl.source, self.m.now, self.limits.events_per_instant
        ))
    }

    /// Run `t`'s program from where it is until it starts busy work,
    /// blocks or exits. `t` is current on its CPU.
    pub(crate) fn step(&mut self, t: TaskId) -> Result<(), SimError> {
        let cpu = self.m.tasks[t].cpu;
        if !self.m.tasks[t].prog.delay_done {
            // The thread's reference time (first timer base) is its
            // creation plus `delay`, not when it first got a CPU: rt-app
            // creates every thread at once, and a periodic task set is
            // released together at 0 as in the real-time literature.
            self.m.tasks[t].prog.delay_done = true;
            let delay = self.wl.tasks[self.m.tasks[t].def].delay;
            self.task_start[t] = later(self.m.tasks[t].created, delay);
            if self.task_start[t] > self.m.now {
                self.sleep_until(t, self.task_start[t]);
                return Ok(());
            }
        }
        loop {
            if self.one_more_at_this_instant() {
                return Err(SimError::Runtime(format!(
                    "{}: task {} keeps executing events without consuming time at t={} ns: more than {} at one instant (tunable max_events_per_instant); add a run, sleep or timer to its loop",
                    self.wl.source, self.m.tasks[t].name, self.m.now, self.limits.events_per_instant
                )));
            }
            if let Some(mx) = self.m.tasks[t].prog.relock {
                if !self.try_lock(t, mx) {
                    self.block(t);
                    return Ok(());
                }
                self.m.tasks[t].prog.relock = None;
            }
            if self.m.tasks[t].busy.is_none() {
                self.next_work_chunk(t);
            }
            if self.m.tasks[t].busy.is_some() {
                self.start_segment(cpu, self.m.rqs[cpu].seg_start.saturating_sub(self.m.now));
                return Ok(());
            }
            let Some(ev) = self.current_event(t) else {
                self.exit_task(t);
                return Ok(());
            };
            match ev {
                Op::Run(ns) => {
                    self.advance(t);
                    self.m.tasks[t].prog.work_pending = self.run_work(ns);
                    self.next_work_chunk(t);
                }
                Op::Runtime(ns) => {
                    self.advance(t);
                    if ns > 0 {
                        self.m.tasks[t].busy = Some(Busy::Until(later(self.m.now, ns)));
                    }
                }
                Op::Sleep(ns) => {
                    self.advance(t);
                    self.sleep_until(t, later(self.m.now, ns));
                    return Ok(());
                }
                Op::SleepAbout(mean) => {
                    self.advance(t);
                    let ns = later(mean / 2, self.m.rng.below(mean.max(1)));
                    self.sleep_until(t, later(self.m.now, ns));
                    return Ok(());
                }
                Op::Timer {
                    timer,
                    own,
                    period,
                    mode,
                } => {
                    self.advance(t);
                    if let Some(until) = self.timer(t, timer, own, period, mode) {
                        self.sleep_until(t, until);
                        return Ok(());
                    }
                }
                Op::Yield => {
                    self.advance(t);
                    let c = self.class_of(t);
                    self.quiet_touch(cpu);
                    self.classes.get(c).yield_task(&mut self.m, cpu);
                    self.m.resched(cpu);
                    return Ok(());
                }
                Op::Lock(mx) => {
                    if !self.try_lock(t, mx) {
                        self.block(t);
                        return Ok(());
                    }
                    self.advance(t);
                }
                Op::Unlock(mx) => {
                    self.advance(t);
                    self.unlock(t, mx);
                }
                Op::Wait { cond: id, mutex } => {
                    self.advance(t);
                    self.unlock(t, mutex);
                    self.m.tasks[t].prog.relock = Some(mutex);
                    self.sync.conds[id].push_back(t);
                    self.block(t);
                    return Ok(());
                }
                Op::Signal(id) => {
                    self.advance(t);
                    if let Some(w) = self.sync.conds[id].pop_front() {
                        self.wake(t, w);
                    }
                }
                Op::Broad(id) => {
                    self.advance(t);
                    // Waking runs no program, so nothing joins the queue
                    // meanwhile: it goes back empty, keeping its buffer.
                    let mut ws = std::mem::take(&mut self.sync.conds[id]);
                    for &w in &ws {
                        self.wake(t, w);
                    }
                    ws.clear();
                    debug_assert!(self.sync.conds[id].is_empty());
                    self.sync.conds[id] = ws;
                }
                Op::Barrier(id) => {
                    self.advance(t);
                    let bar = &mut self.sync.barriers[id];
                    bar.waiting.push(t);
                    if bar.waiting.len() >= bar.parties.max(1) {
                        let ws: Vec<TaskId> = bar.waiting.drain(..).filter(|w| *w != t).collect();
                        for w in ws {
                            self.wake(t, w);
                        }
                    } else {
                        self.block(t);
                        return Ok(());
                    }
                }
                Op::Suspend(id) => {
                    self.advance(t);
                    self.sync.suspended[id].push(t);
                    self.block(t);
                    return Ok(());
                }
                Op::Resume(id) => {
                    self.advance(t);
                    let ws = std::mem::take(&mut self.sync.suspended[id]);
                    for w in ws {
                        self.wake(t, w);
                    }
                }
                Op::Fork(def) => {
                    self.advance(t);
                    // The parser refuses a fork of an unknown task object.
                    let Some(def) = def else { continue };
                    if self.m.tasks.len() >= self.limits.threads {
                        return Err(SimError::Runtime(format!(
                            "{}: task {} forks \"{}\" at t={} ns but the run already has {} threads (tunable max_threads): a fork loop?",
                            self.wl.source, self.m.tasks[t].name, self.wl.tasks[def].name, self.m.now, self.m.tasks.len()
                        )));
                    }
                    self.fork_task(def, Some(t), cpu);
                }
            }
        }
    }
}
