//! Statistics over repeated timings, as hyperfine reports them: mean ± σ (sample standard deviation),
//! min … max, median, and ratios of means with their σ propagated from both relative σ's.

use serde::Serialize;

/// The median of `samples` (sorted in place); NaN for none.
pub fn median(samples: &mut [f64]) -> f64 {
    if samples.is_empty() {
        return f64::NAN;
    }
    samples.sort_by(f64::total_cmp);
    let mid = samples.len() / 2;
    if samples.len() % 2 == 1 {
        samples[mid]
    } else {
        (samples[mid - 1] + samples[mid]) / 2.0
    }
}

/// Summary of a set of samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// Samples.
    pub count: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (n − 1); 0 for a single sample.
    pub sd: f64,
    /// Smallest sample.
    pub min: f64,
    /// Largest sample.
    pub max: f64,
    /// Median.
    pub median: f64,
}

impl Summary {
    /// `None` for no samples.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let count = samples.len();
        let mean = samples.iter().sum::<f64>() / count as f64;
        let sd = if count > 1 {
            (samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (count - 1) as f64).sqrt()
        } else {
            0.0
        };
        let min = samples.iter().copied().fold(f64::INFINITY, f64::min);
        let max = samples.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        Some(Summary { count, mean, sd, min, max, median: median(&mut samples.to_vec()) })
    }
}

/// `slow.mean / fast.mean` and its σ: ratio · √((σ_s/μ_s)² + (σ_f/μ_f)²), as hyperfine computes
/// "1.52 ± 0.06 times faster than …".
pub fn ratio(slow: &Summary, fast: &Summary) -> (f64, f64) {
    let r = slow.mean / fast.mean;
    let rel = ((slow.sd / slow.mean).powi(2) + (fast.sd / fast.mean).powi(2)).sqrt();
    (r, r * rel)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&mut []).is_nan());
    }

    #[test]
    fn summary_of_known_samples() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sum of squared deviations 32, sample σ = √(32/7).
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!((s.count, s.mean, s.min, s.max, s.median), (8, 5.0, 2.0, 9.0, 4.5));
        assert!((s.sd - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(Summary::of(&[3.0]).unwrap().sd, 0.0);
        assert_eq!(Summary::of(&[]), None);
    }

    #[test]
    fn ratio_propagates_relative_errors() {
        let slow = Summary { count: 10, mean: 30.0, sd: 3.0, min: 0.0, max: 0.0, median: 0.0 }; // 10 %
        let fast = Summary { count: 10, mean: 10.0, sd: 0.0, min: 0.0, max: 0.0, median: 0.0 }; // 0 %
        assert_eq!(ratio(&slow, &fast), (3.0, 0.30000000000000004));
        let fast = Summary { sd: 1.0, ..fast }; // 10 % as well: √2 · 10 % of 3
        let (r, sd) = ratio(&slow, &fast);
        assert_eq!(r, 3.0);
        assert!((sd - 3.0 * 0.02f64.sqrt()).abs() < 1e-12);
    }
}
