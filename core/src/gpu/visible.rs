//! Which devices the CUDA driver starts. `cuInit` starts every visible device, whichever ones a process then uses: on
//! a host of 4 × H200 it took 0.57–1.03 s for a command that used one of them, and 0.19–0.26 s with only that one
//! visible (2000 photos through `batch --devices 0`: 358–373 images/s by the clock against 420–438). So a command
//! that knows its devices before its first CUDA call shows the driver those alone ([`show_only`]), and keeps
//! naming them by the ordinals its user gave ([`driver_ordinal`] turns one into the driver's).

use std::sync::atomic::Ordering;
use std::sync::OnceLock;

/// The ordinals [`show_only`] showed, in the driver's order: the driver's ordinal `i` is the user's `SHOWN[i]`.
static SHOWN: OnceLock<Vec<usize>> = OnceLock::new();

/// The variable the driver reads at `cuInit` (the devices' order follows `CUDA_DEVICE_ORDER` either way).
const VARIABLE: &str = "CUDA_VISIBLE_DEVICES";

/// Shows the CUDA driver only the devices `ordinals` (as numbered with every device visible); the rest of the
/// process keeps calling them by those ordinals. Returns whether it did: not where `CUDA_VISIBLE_DEVICES` is set
/// already (the user's or a scheduler's choice stands), nor once this process has looked for the driver (it may have
/// started it, and the ordinals would then be the driver's own), nor for no ordinals, nor a second time.
///
/// It sets an environment variable, which the driver reads when it starts: call it before any CUDA call — this
/// library's or another's — while the process runs a single thread (first thing in `main`, or before a Python
/// program starts its threads).
pub fn show_only(ordinals: &[usize]) -> bool {
    let refused = std::env::var_os(VARIABLE).is_some() || super::DRIVER_TOUCHED.load(Ordering::Relaxed);
    let Some((value, shown)) = narrowed(refused, ordinals) else {
        return false;
    };
    if SHOWN.set(shown).is_err() {
        return false;
    }
    crate::trace::mark(&format!("GPU: the driver shown {VARIABLE}={value}"));
    std::env::set_var(VARIABLE, value);
    true
}

/// The value of `CUDA_VISIBLE_DEVICES` that shows `ordinals`, and their order in it; `None` where narrowing is
/// `refused` or no ordinal is given.
fn narrowed(refused: bool, ordinals: &[usize]) -> Option<(String, Vec<usize>)> {
    if refused || ordinals.is_empty() {
        return None;
    }
    // In increasing order: the driver shows the devices listed before the first one that does not exist, so a
    // device that is not there hides only those after it, which are not there either.
    let mut shown = ordinals.to_vec();
    shown.sort_unstable();
    shown.dedup();
    let value = shown.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
    Some((value, shown))
}

/// The driver's ordinal of the device the user calls `ordinal`: itself unless [`show_only`] narrowed the devices;
/// past the last device shown (so opening it fails as a device that is not there) for one it did not show.
pub fn driver_ordinal(ordinal: usize) -> usize {
    match SHOWN.get() {
        None => ordinal,
        Some(shown) => shown.iter().position(|&o| o == ordinal).unwrap_or(shown.len() + ordinal),
    }
}

#[cfg(test)]
mod tests {
    use super::narrowed;

    #[test]
    fn shows_the_ordinals_asked_for_in_increasing_order_once_each() {
        assert_eq!(narrowed(false, &[2]), Some(("2".into(), vec![2])));
        assert_eq!(narrowed(false, &[3, 1, 3, 0]), Some(("0,1,3".into(), vec![0, 1, 3])));
        // The user's (or a scheduler's) CUDA_VISIBLE_DEVICES, or a driver already looked for, stands; no devices asked
        // for shows them all.
        assert_eq!(narrowed(true, &[0]), None);
        assert_eq!(narrowed(false, &[]), None);
    }

    #[test]
    fn a_process_that_looked_for_the_driver_keeps_every_device() {
        // The driver may be started by now, and would not read the variable again.
        crate::gpu::driver_present();
        assert!(!super::show_only(&[0]));
        assert_eq!(super::driver_ordinal(3), 3);
    }
}
