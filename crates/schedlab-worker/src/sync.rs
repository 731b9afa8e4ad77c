//! Synchronisation objects shared by the worker threads of a run, across
//! worker processes: mutexes, condition variables, barriers,
//! suspend/resume, and shared timers, as the simulator models them
//! (engine/sync.rs: futex-style mutexes that wake one waiter, no hand-off,
//! no priority inheritance).
//!
//! They live in one file the runner creates and every worker maps shared:
//! one 16-byte slot per object name, `[u32 state, u32 count, u64 timer]`.
//! Waits use FUTEX_WAIT_BITSET with an absolute CLOCK_MONOTONIC timeout
//! at the run's end time, so a thread blocked on a partner that has
//! already finished still stops on time.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::SeqCst};

/// The mapped slots.
pub struct Shared {
    base: *mut u8,
    slots: usize,
}

// SAFETY: the mapping is only accessed through atomics.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

const SLOT: usize = 16;

impl Shared {
    /// Map `path` (a file of `slots` × 16 zero bytes made by the runner).
    pub fn map(path: &str, slots: usize) -> Result<Shared, String> {
        use std::os::fd::AsRawFd;
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| format!("{path}: {e}"))?;
        let len = (slots.max(1) * SLOT) as u64;
        if f.metadata().map_err(|e| e.to_string())?.len() < len {
            return Err(format!("{path}: smaller than {slots} sync slots"));
        }
        // SAFETY: a shared read/write mapping of a file at least `len`
        // bytes long; the fd may close afterwards (the mapping stays).
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(format!("{path}: mmap: {}", std::io::Error::last_os_error()));
        }
        Ok(Shared {
            base: p as *mut u8,
            slots,
        })
    }

    pub fn slots(&self) -> usize {
        self.slots
    }

    fn state(&self, i: usize) -> &AtomicU32 {
        assert!(i < self.slots, "sync slot {i} out of range");
        // SAFETY: in bounds (checked), 16-byte aligned slots of a page-aligned mapping.
        unsafe { &*(self.base.add(i * SLOT) as *const AtomicU32) }
    }

    fn count(&self, i: usize) -> &AtomicU32 {
        assert!(i < self.slots, "sync slot {i} out of range");
        // SAFETY: as in `state`, 4 bytes further.
        unsafe { &*(self.base.add(i * SLOT + 4) as *const AtomicU32) }
    }

    pub fn timer(&self, i: usize) -> &AtomicU64 {
        assert!(i < self.slots, "sync slot {i} out of range");
        // SAFETY: as in `state`, 8 bytes further (8-byte aligned).
        unsafe { &*(self.base.add(i * SLOT + 8) as *const AtomicU64) }
    }
}

/// Sleep while `*w == val`, at most until `end` (CLOCK_MONOTONIC ns).
fn wait(w: &AtomicU32, val: u32, end: u64) {
    let ts = libc::timespec {
        tv_sec: (end / 1_000_000_000) as libc::time_t,
        tv_nsec: (end % 1_000_000_000) as libc::c_long,
    };
    // SAFETY: a shared (not PRIVATE) futex wait on a live atomic, with an
    // absolute monotonic timeout; spurious returns are re-checked by callers.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            w.as_ptr(),
            libc::FUTEX_WAIT_BITSET,
            val,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            libc::FUTEX_BITSET_MATCH_ANY,
        )
    };
}

fn wake(w: &AtomicU32, n: i32) {
    // SAFETY: FUTEX_WAKE on a live atomic's address.
    unsafe { libc::syscall(libc::SYS_futex, w.as_ptr(), libc::FUTEX_WAKE, n) };
}

fn before(end: u64) -> bool {
    crate::program::now_ns() < end
}

impl Shared {
    /// Take mutex `i` (0 free, 1 taken, 2 taken with waiters); false if the
    /// end time came first.
    pub fn lock(&self, i: usize, end: u64) -> bool {
        let m = self.state(i);
        let mut c = match m.compare_exchange(0, 1, SeqCst, SeqCst) {
            Ok(_) => return true,
            Err(c) => c,
        };
        if c != 2 {
            c = m.swap(2, SeqCst);
        }
        while c != 0 {
            if !before(end) {
                return false;
            }
            wait(m, 2, end);
            c = m.swap(2, SeqCst);
        }
        true
    }

    /// Release mutex `i`, waking one waiter.
    pub fn unlock(&self, i: usize) {
        let m = self.state(i);
        if m.fetch_sub(1, SeqCst) != 1 {
            m.store(0, SeqCst);
            wake(m, 1);
        }
    }

    /// `pthread_cond_wait(cond, mutex)`; false if the end time came first.
    pub fn cond_wait(&self, cond: usize, mutex: usize, end: u64) -> bool {
        let c = self.state(cond);
        let seq = c.load(SeqCst);
        self.unlock(mutex);
        while c.load(SeqCst) == seq && before(end) {
            wait(c, seq, end);
        }
        self.lock(mutex, end)
    }

    /// Wake one (`signal`) or all (`broad`) waiters of a condition.
    pub fn cond_wake(&self, cond: usize, all: bool) {
        let c = self.state(cond);
        c.fetch_add(1, SeqCst);
        wake(c, if all { i32::MAX } else { 1 });
    }

    /// Wait until `parties` threads have arrived at barrier `i`.
    pub fn barrier(&self, i: usize, parties: u32, end: u64) {
        let (gen, arrived) = (self.state(i), self.count(i));
        let g = gen.load(SeqCst);
        if arrived.fetch_add(1, SeqCst) + 1 >= parties {
            arrived.store(0, SeqCst);
            gen.fetch_add(1, SeqCst);
            wake(gen, i32::MAX);
            return;
        }
        while gen.load(SeqCst) == g && before(end) {
            wait(gen, g, end);
        }
    }

    /// Block until `resume` on the same name.
    pub fn suspend(&self, i: usize, end: u64) {
        let s = self.state(i);
        let seq = s.load(SeqCst);
        while s.load(SeqCst) == seq && before(end) {
            wait(s, seq, end);
        }
    }

    /// Wake every thread suspended on the name.
    pub fn resume(&self, i: usize) {
        self.cond_wake(i, true);
    }
}
