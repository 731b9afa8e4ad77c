//! A task's life outside the scheduler's core paths (kernel/sched/core.c):
//! fork (`wake_up_new_task`), blocking and timed sleep, weights from nice
//! and the process's share, exit, and changes to a running task's
//! attributes (`__sched_setscheduler`'s put-back and re-pick).

use super::Simulator;
use crate::class::{DequeueFlags, EnqueueFlags, WakeFlags, Waker};
use crate::clock::Ns;
use crate::cpuset::CpuId;
use crate::stats::TaskStats;
use crate::task::{OnRq, Prog, Stamp, Task, TaskId, TaskState};
use crate::trace::TraceEvent;
use crate::workload::Policy;

impl Simulator {
    /// Create a thread of task object `def` (`wake_up_new_task`).
    pub(crate) fn fork_task(
        &mut self,
        def: usize,
        parent: Option<TaskId>,
        parent_cpu: CpuId,
    ) -> TaskId {
        let id = self.m.tasks.len();
        let proc_idx = self.process_for(def);
        let d = &self.wl.tasks[def];
        let k = self.instance_counter[def];
        self.instance_counter[def] += 1;
        let name = d.thread_name(k);
        let attrs = self.attrs_of(def, 0);
        let policy = attrs.policy.unwrap_or(self.wl.default_policy);
        let (nice, rt_priority) = policy.split_priority(attrs.priority);
        let pid = if self.m.processes[proc_idx].threads.is_empty() {
            self.m.processes[proc_idx].tgid
        } else {
            self.next_pid += 1;
            self.next_pid
        };
        let tgid = self.m.processes[proc_idx].tgid;
        self.m.processes[proc_idx].threads.push(id);
        self.m.processes[proc_idx].live += 1;
        let group = self.group_of(def, &attrs);
        let task = Task {
            id,
            name,
            pid,
            tgid,
            def,
            process: proc_idx,
            policy,
            nice,
            rt_priority,
            dl: crate::task::DlAttr::from_attrs(policy, &attrs),
            mem_ppm: attrs.memory_ppm.unwrap_or(0),
            custom_slice: attrs.dl_runtime.filter(|s| *s > 0),
            weight: Self::weight_of(policy, nice),
            affinity: self.m.effective_affinity(self.cpuset_of(&attrs)),
            affinity_req: self.cpuset_of(&attrs),
            group,
            state: TaskState::Runnable,
            on_rq: OnRq::No,
            cpu: parent_cpu,
            last_run_start: 0,
            last_run_end: 0,
            prog: Prog {
                phase_applied: true,
                program: self.programs.of_def[def],
                ..Prog::default()
            },
            own_timers: vec![],
            created: self.m.now,
            exited: None,
            sleep_gen: 0,
            waking_since: Stamp::NONE,
            runnable_since: Stamp::NONE,
            busy: None,
        };
        self.m.any_sched_idle |= task.policy == Policy::Idle;
        self.m.tasks.push(task);
        self.m.stats.tasks.push(TaskStats::default());
        self.task_start.push(self.m.now);
        if !self.m.tasks[id].affinity.contains(parent_cpu) {
            self.m.tasks[id].cpu = self.m.tasks[id].affinity.first().unwrap_or(0);
        }
        if policy == Policy::Deadline && self.classes.dl_admission {
            let bw = self.m.tasks[id].dl.bw();
            self.admit_dl(id, 0, bw);
        }
        self.reweight_process(proc_idx, Some(id));
        // Every class sets up its per-task state, so a later policy change
        // (an rt-app phase) only moves the task between class queues.
        self.quiet_touch(self.m.tasks[id].cpu);
        self.quiet_touch(parent_cpu);
        for k in 0..self.classes.len() {
            self.classes.get(k).task_fork(&mut self.m, id, parent);
        }
        let waker = Waker {
            cpu: parent_cpu,
            task: parent,
        };
        let prev = self.m.tasks[id].cpu;
        let given = parent
            .is_none()
            .then(|| self.start_cpus.get(&self.m.tasks[id].name).copied())
            .flatten()
            .filter(|c| self.m.online.contains(*c) && self.m.tasks[id].affinity.contains(*c));
        let cpu = match given {
            Some(c) => c,
            None => self.select_task_rq(id, prev, WakeFlags::FORK, waker),
        };
        self.m.tasks[id].cpu = cpu;
        if parent.is_none() {
            // The start release: on the host every workload thread waits
            // for the common start and is woken then (a sched_waking and a
            // measured wakeup latency); the simulator counts it the same
            // way (docs/model.md, "Metrics"). Threads a task forks later
            // have sched_wakeup_new only, on both sides.
            self.m.stats.wakeups += 1;
            self.m.tasks[id].waking_since = Stamp::at(self.m.now);
            self.m.trace(
                parent_cpu,
                TraceEvent::Waking {
                    task: id,
                    target_cpu: cpu,
                },
            );
        }
        let target = self.wake_target(cpu, parent_cpu);
        self.activate(id, cpu, EnqueueFlags::INITIAL);
        self.m.trace(cpu, TraceEvent::WakeupNew { task: id });
        self.wakeup_preempt(cpu, id, WakeFlags::FORK);
        self.delay_wakeup_resched(id, target);
        id
    }

    /// The current task `t` blocks until woken (its CPU reschedules).
    pub(crate) fn block(&mut self, t: TaskId) {
        let task = &mut self.m.tasks[t];
        task.state = TaskState::Sleeping;
        task.sleep_gen += 1;
        let cpu = task.cpu;
        self.m.resched(cpu);
    }

    /// The current task `t` sleeps until `until`.
    /// Its timer fires at the end of the slack window, or earlier with
    /// another timer on its CPU (hrtimer.rs).
    pub(crate) fn sleep_until(&mut self, t: TaskId, until: Ns) {
        let slack = self.costs.slack_for(self.m.tasks[t].policy);
        self.block(t);
        let gen = self.m.tasks[t].sleep_gen;
        if slack > 0 {
            self.quiet_touch(self.m.tasks[t].cpu);
            self.slack_timers.arm(self.m.tasks[t].cpu, until, t, gen);
        }
        let jitter = match self.costs.timer_jitter {
            0 => 0,
            j => self.m.rng.below(j + 1),
        };
        self.events.push(
            until.saturating_add(slack).saturating_add(jitter),
            crate::event::EventKind::Wake { task: t, gen },
        );
    }

    /// The load weight of a thread of process `p` with `policy` and `nice`:
    /// the nice weight, as the policy's class makes it effective (weight
    /// policies scale it for the process's live threads on the online CPUs).
    pub(crate) fn task_weight(&self, p: usize, policy: Policy, nice: i32) -> u64 {
        let w = Self::weight_of(policy, nice);
        let c = self.class_for(policy);
        self.classes
            .get_ref(c)
            .effective_weight(&self.m, p, policy, w)
    }

    /// Recompute the weights of the live threads of process `p` after it
    /// gained or lost a thread or CPUs went on or offline, if some class's
    /// weights depend on that. `new`: a thread not yet enqueued anywhere
    /// (its weight is just set).
    pub(crate) fn reweight_process(&mut self, p: usize, new: Option<TaskId>) {
        if !self.weights_track_threads {
            return;
        }
        let live: Vec<TaskId> = self.m.processes[p]
            .threads
            .iter()
            .copied()
            .filter(|t| self.m.tasks[*t].exited.is_none())
            .collect();
        for t in live {
            let w = self.task_weight(p, self.m.tasks[t].policy, self.m.tasks[t].nice);
            if w == self.m.tasks[t].weight {
                continue;
            }
            self.m.set_weight(t, w);
            if Some(t) != new {
                let c = self.class_of(t);
                self.quiet_touch(self.m.tasks[t].cpu);
                self.classes.get(c).reweight_task(&mut self.m, t);
            }
        }
    }

    /// The current task `t` exits.
    pub(crate) fn exit_task(&mut self, t: TaskId) {
        if self.m.tasks[t].policy == Policy::Deadline && self.classes.dl_admission {
            let bw = self.m.tasks[t].dl.bw();
            self.dl_bw.0 -= bw.min(self.dl_bw.0);
        }
        let cpu = self.m.tasks[t].cpu;
        self.m.tasks[t].state = TaskState::Dead;
        self.m.tasks[t].exited = Some(self.m.now);
        self.m.processes[self.m.tasks[t].process].live -= 1;
        let proc_idx = self.m.tasks[t].process;
        self.reweight_process(proc_idx, None);
        self.m.trace(cpu, TraceEvent::Exit { task: t });
        self.m.resched(cpu);
        if self
            .m
            .tasks
            .iter()
            .all(|x| x.exited.is_some() || self.wl.tasks[x.def].daemon)
            && self.end.is_none_or(|e| e > self.m.now)
        {
            // rt-app ends when every thread has ended.
            self.end = Some(self.m.now);
            self.events.push(self.m.now, crate::event::EventKind::End);
        }
    }

    /// Apply new scheduling attributes to the running task `t`
    /// (`__sched_setscheduler`: dequeue SAVE, put, change, enqueue RESTORE, set).
    pub(crate) fn change_running_task(&mut self, t: TaskId, f: impl FnOnce(&mut Task)) {
        let cpu = self.m.tasks[t].cpu;
        let c = self.class_of(t);
        self.quiet_touch(cpu);
        self.classes.get(c).dequeue_task(
            &mut self.m,
            cpu,
            t,
            DequeueFlags::SAVE | DequeueFlags::MOVE,
        );
        self.classes.get(c).put_prev_task(&mut self.m, cpu, t, None);
        f(&mut self.m.tasks[t]);
        // A policy change may move the task to another class
        // (switched_from / switched_to).
        let c = self.class_of(t);
        self.classes.get(c).reweight_task(&mut self.m, t);
        self.classes
            .get(c)
            .enqueue_task(&mut self.m, cpu, t, EnqueueFlags::RESTORE);
        self.classes.get(c).set_next_task(&mut self.m, cpu, t);
        if !self.m.tasks[t].affinity.contains(cpu) {
            let dst = self.m.tasks[t].affinity.first().unwrap_or(0);
            self.m.rqs[cpu].active_balance_to = Some(dst);
        }
        self.m.resched(cpu);
    }
}
