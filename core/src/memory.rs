//! The memory budget: how many bytes of host memory a run may use, checked against an estimate made from the
//! image's header before anything image-sized is allocated.
//!
//! Why: a file of a few dozen bytes can claim a 65535×65535 canvas. Allocating for that claim ends the process
//! with an abort ("memory allocation of … bytes failed") that no `Result` can catch, so every path (one image,
//! batch, generate, bench) estimates its peak from the dimensions first and refuses what does not fit, naming
//! the file, what it needs and the budget. The estimates per path live beside the code they describe
//! ([`crate::pipeline::peak_bytes_per_pixel`], `batch`, `generate`, `bench`); this module holds the budget and
//! a pool that lets batch workers share it.
//!
//! Default budget: 80 % of the memory the system can still give (`MemAvailable`, or the cgroup's free memory
//! when that is lower), and 80 % of what the address-space limit (`RLIMIT_AS`, `ulimit -v`) leaves above the
//! process's current size; `--max-memory` overrides both.

use std::sync::{Condvar, Mutex};

/// Share of the available memory a run may plan to use: the rest is headroom for the allocator, the
/// decoders' own tables, the CUDA driver and whatever else the machine runs.
const SHARE: f64 = 0.8;

/// A byte budget for host memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// Bytes a run may plan to use.
    pub bytes: u64,
}

impl Budget {
    /// `--max-memory` when given, else [`Budget::detect`].
    pub fn new(max_memory: Option<u64>) -> Budget {
        max_memory.map(|bytes| Budget { bytes }).unwrap_or_else(Budget::detect)
    }

    /// 80 % of the memory available now, bounded by the cgroup and the address-space limit.
    pub fn detect() -> Budget {
        let mut sys = sysinfo::System::new();
        sys.refresh_memory();
        let mut available = sys.available_memory();
        if let Some(cg) = sys.cgroup_limits() {
            available = available.min(cg.free_memory);
        }
        if let Some(room) = address_space_room() {
            available = available.min(room);
        }
        Budget { bytes: (available as f64 * SHARE) as u64 }
    }

    /// Refuses a `width × height` image of `path` whose estimated peak, `needed` bytes, is over the budget.
    pub fn check(&self, path: &std::path::Path, width: u32, height: u32, needed: u64) -> crate::error::Result<()> {
        if needed > self.bytes {
            return Err(crate::error::Error::OverBudget {
                path: path.to_owned(),
                width,
                height,
                needed,
                budget: self.bytes,
            });
        }
        Ok(())
    }
}

/// Bytes for `width × height` pixels at `bytes_per_pixel`, saturating (a header can claim anything).
pub fn image_bytes(width: u32, height: u32, bytes_per_pixel: u64) -> u64 {
    (width as u64).saturating_mul(height as u64).saturating_mul(bytes_per_pixel)
}

/// What `RLIMIT_AS` leaves above the process's current virtual size, if a limit is set (Linux).
fn address_space_room() -> Option<u64> {
    let (soft, _) = rlimit::getrlimit(rlimit::Resource::AS).ok()?;
    if soft == rlimit::INFINITY {
        return None;
    }
    // /proc/self/status: "VmSize:    123456 kB".
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let used_kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0);
    Some(soft.saturating_sub(used_kb * 1024))
}

/// Parses a size such as `4G`, `512MiB`, `19 GB` or `1000000` (bytes); `G` and `GB` mean 10^9, `GiB` 2^30.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    // bytesize reads "4G" as 4 GB; a bare number as bytes.
    t.parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .ok()
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("'{s}' is not a size such as 4G, 512MiB or 19GB"))
}

/// `46 GB`, `1.5 GB`, `120 MB`: decimal units, two significant digits at least.
pub fn human(bytes: u64) -> String {
    let (value, unit) = match bytes {
        b if b >= 1_000_000_000 => (b as f64 / 1e9, "GB"),
        b if b >= 1_000_000 => (b as f64 / 1e6, "MB"),
        b if b >= 1_000 => (b as f64 / 1e3, "kB"),
        b => return format!("{b} bytes"),
    };
    if value >= 10.0 {
        format!("{value:.0} {unit}")
    } else {
        format!("{value:.1} {unit}")
    }
}

/// A budget shared by concurrent workers (batch): each reserves its image's estimate before decoding and
/// waits while others hold too much; an image larger than the whole budget is refused at once. A worker
/// holds at most one reservation at a time, so waiting cannot deadlock.
pub struct Pool {
    total: u64,
    used: Mutex<u64>,
    released: Condvar,
}

/// Bytes held from a [`Pool`]; given back on drop.
pub struct Reservation<'a> {
    pool: &'a Pool,
    bytes: u64,
}

impl Pool {
    /// A pool of `budget` bytes.
    pub fn new(budget: Budget) -> Pool {
        Pool { total: budget.bytes, used: Mutex::new(0), released: Condvar::new() }
    }

    /// The whole budget.
    pub fn budget(&self) -> Budget {
        Budget { bytes: self.total }
    }

    /// Waits until the `needed` bytes of `path`'s `width × height` image fit beside the other reservations;
    /// refuses them at once if they never can (over the whole budget).
    pub fn reserve(
        &self,
        path: &std::path::Path,
        width: u32,
        height: u32,
        needed: u64,
    ) -> crate::error::Result<Reservation<'_>> {
        self.budget().check(path, width, height, needed)?;
        let bytes = needed;
        let mut used = self.used.lock().expect("no panic while locked");
        while *used + bytes > self.total {
            used = self.released.wait(used).expect("no panic while locked");
        }
        *used += bytes;
        Ok(Reservation { pool: self, bytes })
    }

    /// [`Pool::reserve`] without the wait: `Ok(None)` where the bytes do not fit beside the others now.
    /// For work done ahead of need (batch's PNGs read while the GPU opens), which must not hold a thread.
    pub fn try_reserve(
        &self,
        path: &std::path::Path,
        width: u32,
        height: u32,
        needed: u64,
    ) -> crate::error::Result<Option<Reservation<'_>>> {
        self.budget().check(path, width, height, needed)?;
        let mut used = self.used.lock().expect("no panic while locked");
        if *used + needed > self.total {
            return Ok(None);
        }
        *used += needed;
        Ok(Some(Reservation { pool: self, bytes: needed }))
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        *self.pool.used.lock().expect("no panic while locked") -= self.bytes;
        self.pool.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_print() {
        assert_eq!(parse_size("4G"), Ok(4_000_000_000));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert_eq!(parse_size("19 GB"), Ok(19_000_000_000));
        assert_eq!(parse_size("1000"), Ok(1000));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("0").is_err());
        assert_eq!(human(46_000_000_000), "46 GB");
        assert_eq!(human(1_500_000_000), "1.5 GB");
        assert_eq!(human(120_000_000), "120 MB");
        assert_eq!(image_bytes(u32::MAX, u32::MAX, u64::MAX), u64::MAX);
    }

    #[test]
    fn the_detected_budget_is_positive_and_below_total_memory() {
        let b = Budget::detect();
        let mut sys = sysinfo::System::new();
        sys.refresh_memory();
        assert!(b.bytes > 0 && b.bytes <= sys.total_memory(), "{b:?}");
    }

    #[test]
    fn the_pool_refuses_what_never_fits_and_waits_for_what_will() {
        let pool = Pool::new(Budget { bytes: 100 });
        let p = std::path::Path::new("x.png");
        assert!(pool.reserve(p, 10, 10, 101).is_err());
        let a = pool.reserve(p, 10, 6, 60).unwrap();
        std::thread::scope(|s| {
            let waiter = s.spawn(|| pool.reserve(p, 10, 6, 60).map(|r| r.bytes).ok());
            std::thread::sleep(std::time::Duration::from_millis(50));
            assert!(!waiter.is_finished(), "60 + 60 > 100: the second waits");
            drop(a);
            assert_eq!(waiter.join().unwrap(), Some(60));
        });
    }

    #[test]
    fn trying_to_reserve_never_waits() {
        let pool = Pool::new(Budget { bytes: 100 });
        let p = std::path::Path::new("x.png");
        assert!(pool.try_reserve(p, 10, 10, 101).is_err(), "over the whole budget: refused, as reserve does");
        let a = pool.try_reserve(p, 10, 6, 60).unwrap().expect("60 of 100 fit");
        assert!(pool.try_reserve(p, 10, 6, 60).unwrap().is_none(), "60 + 60 > 100: no room now, and no wait");
        let b = pool.try_reserve(p, 10, 4, 40).unwrap().expect("60 + 40 fit");
        drop((a, b));
        assert_eq!(pool.try_reserve(p, 10, 10, 100).unwrap().map(|r| r.bytes), Some(100), "all given back");
    }
}
