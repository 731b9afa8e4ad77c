//! A worker thread's events, parsed from the plan's JSON arrays:
//! `["run", ns]`, `["runtime", ns]`, `["sleep", ns]`,
//! `["timer", period_ns, "absolute"|"relative", slot|null]`, `["yield"]`,
//! `["lock", slot]`, `["unlock", slot]`, `["wait", cond, mutex]`,
//! `["signal", slot]`, `["broad", slot]`, `["barrier", slot, parties]`,
//! `["suspend", slot]`, `["resume", slot]` (slots index the shared sync
//! file, sync.rs; a timer without a slot is the thread's own).

use serde_json::Value;

#[derive(Debug, Clone)]
pub enum Event {
    Run(u64),
    Runtime(u64),
    Sleep(u64),
    Timer {
        period: u64,
        relative: bool,
        slot: Option<usize>,
    },
    Yield,
    Lock(usize),
    Unlock(usize),
    Wait {
        cond: usize,
        mutex: usize,
    },
    Signal(usize),
    Broad(usize),
    Barrier {
        slot: usize,
        parties: u32,
    },
    Suspend(usize),
    Resume(usize),
}

impl Event {
    /// Parse one event; the error says which element was wrong.
    pub fn parse(v: &Value) -> Result<Event, String> {
        let a = v.as_array().ok_or("an event is a JSON array")?;
        let kind = a
            .first()
            .and_then(Value::as_str)
            .ok_or("an event starts with its kind")?;
        let n = |i: usize| -> Result<u64, String> {
            a.get(i).and_then(Value::as_u64).ok_or(format!(
                "{kind}: element {i} must be a non-negative integer"
            ))
        };
        let slot = |i: usize| n(i).map(|x| x as usize);
        Ok(match kind {
            "run" => Event::Run(n(1)?),
            "runtime" => Event::Runtime(n(1)?),
            "sleep" => Event::Sleep(n(1)?),
            "timer" => Event::Timer {
                period: n(1)?,
                relative: a.get(2).and_then(Value::as_str) == Some("relative"),
                slot: a.get(3).and_then(Value::as_u64).map(|x| x as usize),
            },
            "yield" => Event::Yield,
            "lock" => Event::Lock(slot(1)?),
            "unlock" => Event::Unlock(slot(1)?),
            "wait" => Event::Wait {
                cond: slot(1)?,
                mutex: slot(2)?,
            },
            "signal" => Event::Signal(slot(1)?),
            "broad" => Event::Broad(slot(1)?),
            "barrier" => Event::Barrier {
                slot: slot(1)?,
                parties: n(2)? as u32,
            },
            "suspend" => Event::Suspend(slot(1)?),
            "resume" => Event::Resume(slot(1)?),
            k => return Err(format!("event {k} is not supported by the worker")),
        })
    }

    /// Index of the highest sync slot the event uses.
    pub fn max_slot(&self) -> Option<usize> {
        match self {
            Event::Timer { slot, .. } => *slot,
            Event::Lock(s)
            | Event::Unlock(s)
            | Event::Signal(s)
            | Event::Broad(s)
            | Event::Suspend(s)
            | Event::Resume(s)
            | Event::Barrier { slot: s, .. } => Some(*s),
            Event::Wait { cond, mutex } => Some(*cond.max(mutex)),
            _ => None,
        }
    }
}
