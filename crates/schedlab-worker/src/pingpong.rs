//! `schedlab-worker pingpong CPU ROUNDS`: the cost of a context switch as
//! `perf bench sched pipe` measures it: two threads pinned to one CPU pass
//! a byte back and forth through a socket pair; each round trip is two
//! switches plus two writes and two reads. Prints the mean round trip, ns.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;

/// Pin the calling thread to `cpu` (< CPU_SETSIZE).
pub fn pin(cpu: usize) -> Result<(), String> {
    // SAFETY: a zeroed cpu_set_t with one CPU set, passed with its size.
    let rc = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if rc != 0 {
        return Err(std::io::Error::last_os_error().to_string());
    }
    Ok(())
}

/// Mean ns per round trip over `rounds` on `cpu`.
pub fn round_trip_ns(cpu: usize, rounds: u64) -> Result<f64, String> {
    let (mut a, mut b) = UnixStream::pair().map_err(|e| e.to_string())?;
    let peer = std::thread::spawn(move || -> Result<(), String> {
        pin(cpu).map_err(|e| format!("pin to CPU {cpu}: {e}"))?;
        let mut byte = [0u8; 1];
        for _ in 0..rounds {
            b.read_exact(&mut byte).map_err(|e| e.to_string())?;
            b.write_all(&byte).map_err(|e| e.to_string())?;
        }
        Ok(())
    });
    pin(cpu).map_err(|e| format!("pin to CPU {cpu}: {e}"))?;
    let mut byte = [1u8; 1];
    let t0 = crate::program::now_ns();
    for _ in 0..rounds {
        a.write_all(&byte).map_err(|e| e.to_string())?;
        a.read_exact(&mut byte).map_err(|e| e.to_string())?;
    }
    let t1 = crate::program::now_ns();
    peer.join()
        .map_err(|_| "pingpong peer panicked".to_string())??;
    Ok((t1 - t0) as f64 / rounds.max(1) as f64)
}

/// Median ns from a write on `from` to the blocked reader on `to` running
/// again (`schedlab-worker wakeup FROM TO ROUNDS`): a remote wakeup of a
/// task whose CPU is idle (the waker pauses 1 ms between rounds, so the
/// reader's CPU goes idle): the wakeup, the IPI, the idle exit and the
/// switch, plus a write and a read.
pub fn remote_wake_ns(from: usize, to: usize, rounds: u64) -> Result<u64, String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    let (mut a, mut b) = UnixStream::pair().map_err(|e| e.to_string())?;
    let sent = Arc::new(AtomicU64::new(0));
    let seen = sent.clone();
    let reader = std::thread::spawn(move || -> Result<Vec<u64>, String> {
        pin(to).map_err(|e| format!("pin to CPU {to}: {e}"))?;
        let mut byte = [0u8; 1];
        let mut lat = Vec::with_capacity(rounds as usize);
        for _ in 0..rounds {
            b.read_exact(&mut byte).map_err(|e| e.to_string())?;
            let now = crate::program::now_ns();
            lat.push(now.saturating_sub(seen.load(Ordering::SeqCst)));
            b.write_all(&byte).map_err(|e| e.to_string())?;
        }
        Ok(lat)
    });
    pin(from).map_err(|e| format!("pin to CPU {from}: {e}"))?;
    let mut byte = [1u8; 1];
    for _ in 0..rounds {
        std::thread::sleep(std::time::Duration::from_millis(1));
        sent.store(crate::program::now_ns(), Ordering::SeqCst);
        a.write_all(&byte).map_err(|e| e.to_string())?;
        a.read_exact(&mut byte).map_err(|e| e.to_string())?;
    }
    let mut lat = reader
        .join()
        .map_err(|_| "wakeup reader panicked".to_string())??;
    lat.sort_unstable();
    Ok(lat.get(lat.len() / 2).copied().unwrap_or(0))
}
