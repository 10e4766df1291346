//! A seeded run: what makes two runs of one workload on real hardware differ (the order and
//! timing in which rt-app's threads get going, interrupts, other load) is modelled as each
//! thread starting a little later than its workload says. Simplified: one uniform delay per
//! thread in [0, spread), drawn from the seed and the thread's index alone, so a thread's
//! delay does not depend on the others and a seed always gives the same run.

use crate::time::Ns;

/// splitmix64's output function: a well-mixed 64-bit value of `x`.
fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// How much later thread `id` starts under `seed` (0: not at all).
pub(super) fn start_delay(seed: u64, spread: Ns, id: u32) -> Ns {
    if seed == 0 {
        return 0;
    }
    let draw = mix(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ mix(id as u64 + 1));
    // The high bits scaled to [0, spread): no modulo bias.
    ((draw as u128 * spread as u128) >> 64) as Ns
}

/// How late the interrupt of a timer expiring at `at` on `cpu` comes under `seed` (its entry
/// latency): a uniform draw in [0, spread) from the seed and the expiry, common to every CPU
/// (the emulator serves the timers of one instant together), plus the CPU's own draw in
/// [0, skew) from the seed, the CPU and the expiry, so that the ticks and timers of CPUs at
/// one instant come in a different order each time.
pub(super) fn irq_delay(seed: u64, (spread, skew): (Ns, Ns), cpu: usize, at: Ns) -> Ns {
    if spread == 0 && skew == 0 {
        return 0; // hardware platforms: every tick and sleep comes here
    }
    let scaled = |draw: u64, range: Ns| ((draw as u128 * range as u128) >> 64) as Ns;
    let common = mix(mix(seed ^ 0x7469_636b) ^ mix(at.rotate_left(16)));
    let own = mix(mix(seed ^ 0x736b_6577) ^ mix(at.rotate_left(16) ^ cpu as u64));
    scaled(common, spread) + scaled(own, skew)
}

/// The value of a draw (uniform over the u64s) from a distribution given by `quantiles` at
/// probabilities (k + ½)/n: interpolated between them, the ends held; `none` when there are
/// none.
fn quantile(quantiles: &[u64], draw: u64, none: u64) -> u64 {
    let Some(last) = quantiles.len().checked_sub(1) else {
        return none;
    };
    // u·n - ½ in 1/2^32 steps: the position among the quantiles.
    let pos = ((draw as u128 * quantiles.len() as u128) >> 32).saturating_sub(1 << 31);
    let (i, frac) = ((pos >> 32) as usize, pos & 0xffff_ffff);
    let (lo, hi) = (quantiles[i.min(last)], quantiles[(i + 1).min(last)]);
    lo + (((hi - lo) as u128 * frac) >> 32) as u64
}

/// A draw of `seed` for a purpose, `who` (a CPU or thread) and an instant `at`.
fn keyed(seed: u64, purpose: u64, who: u64, at: Ns) -> u64 {
    mix(mix(seed ^ purpose) ^ mix(at.rotate_left(16) ^ who))
}

/// How much longer than calibrated (1/1000) thread `id`'s job starting its `run` at `at` takes
/// under `seed`: a draw from the platform's `quantiles` (none: 1000, as calibrated).
pub(super) fn work_stretch(seed: u64, quantiles: &[u64], id: u32, at: Ns) -> u64 {
    quantile(quantiles, keyed(seed, 0x776f_726b, id as u64, at), 1000)
}

/// What a CPU's emulated timing is drawn for, each from its own stream of the seed.
#[derive(Debug, Clone, Copy)]
pub(super) enum Draw {
    /// Halted, the emulator's kick before it takes an interrupt.
    Kick = 0x6b69_636b,
    /// Halted, its first kernel work after an interrupt or wakeup.
    HaltExit = 0x6861_6c74,
    /// Running, taking a sleeper's timer interrupt.
    IrqEntry = 0x6972_7165,
    /// A newly idle balance pass's time beyond its counted work.
    NewidleStall = 0x6e65_7769,
    /// Its domains' newly idle cost before the workload starts (drawn at 0).
    BootNewidle = 0x626f_6f74,
}

/// A draw of `seed` for `what` on `cpu` at `at` from the platform's `quantiles` (none: 0).
pub(super) fn cpu_draw(seed: u64, quantiles: &[Ns], what: Draw, cpu: usize, at: Ns) -> Ns {
    quantile(quantiles, keyed(seed, what as u64, cpu as u64, at), 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn irq_delays_lie_in_the_spread_and_depend_on_seed_cpu_and_expiry_alone() {
        let (spread, skew) = (200_000, 30_000);
        let draws = |seed, cpu| -> Vec<Ns> {
            (1..=256)
                .map(|j| irq_delay(seed, (spread, skew), cpu, j * 4_000_000))
                .collect()
        };
        let (a0, a1, b0) = (draws(0, 0), draws(0, 1), draws(1, 0));
        assert!(a0.iter().chain(&a1).chain(&b0).all(|&d| d < spread + skew));
        assert_eq!(a0, draws(0, 0), "same seed, CPU and expiries: same delays");
        assert_ne!(a0, b0, "two seeds differ");
        // The CPUs' interrupts of one expiry lie within the skew of each other, in either
        // order, about half the time each; the expiries' common part covers the spread.
        assert!(a0.iter().zip(&a1).all(|(x, y)| x.abs_diff(*y) < skew));
        let first = a0.iter().zip(&a1).filter(|(x, y)| x < y).count();
        assert!((96..=160).contains(&first), "{first} of 256");
        assert!(a0.iter().max().unwrap() - a0.iter().min().unwrap() > spread / 2);
        assert_eq!(irq_delay(7, (0, 0), 3, 12_345), 0, "no spread, no delay");
    }

    #[test]
    fn work_stretch_draws_follow_the_quantiles() {
        // Quantiles of a uniform stretch on [1000, 2000) at 5%, 15%, … 95%: 1050, 1150, … 1950.
        let q: Vec<u64> = (0..10).map(|k| 1050 + 100 * k).collect();
        let draws: Vec<u64> = (0..10_000)
            .map(|j| work_stretch(3, &q, 7, j * 1_000_003))
            .collect();
        assert!(draws.iter().all(|&d| (1050..=1950).contains(&d)));
        // The middle half lies between the 25% and 75% points, 1250 and 1750 (σ ≈ 0.5%).
        let mid = draws.iter().filter(|&&d| (1250..1750).contains(&d)).count();
        assert!((4_800..5_200).contains(&mid), "{mid}");
        // The ends hold the outer quantiles: 5% of draws at each.
        let low = draws.iter().filter(|&&d| d == 1050).count();
        assert!((400..600).contains(&low), "{low}");
        assert_eq!(
            draws,
            (0..10_000)
                .map(|j| work_stretch(3, &q, 7, j * 1_000_003))
                .collect::<Vec<_>>()
        );
        assert_ne!(work_stretch(3, &q, 7, 5), work_stretch(4, &q, 7, 5));
        assert_eq!(work_stretch(3, &[], 7, 5), 1000, "none: as calibrated");
        assert_eq!(work_stretch(3, &[1019], 7, 5), 1019, "one: constant");
        // Halt exits draw from their own table, differently for the kick and the work after.
        let halt = [30_000, 60_000];
        let draws = |kick: Draw| -> Vec<Ns> {
            (0..64)
                .map(|j| cpu_draw(3, &halt, kick, 1, j * 7_919))
                .collect()
        };
        let (kick, after) = (draws(Draw::Kick), draws(Draw::HaltExit));
        assert!(kick
            .iter()
            .chain(&after)
            .all(|d| (30_000..=60_000).contains(d)));
        assert!(kick.iter().zip(&after).filter(|(k, a)| k != a).count() > 32);
        assert_eq!(cpu_draw(3, &[], Draw::Kick, 1, 5), 0, "none: at once");
    }

    #[test]
    fn newidle_draws_follow_their_quantiles_per_cpu_and_pass() {
        let q = [0, 100_000, 1_000_000];
        let stalls: Vec<Ns> = (0..64)
            .map(|j| cpu_draw(3, &q, Draw::NewidleStall, 1, j * 7_919))
            .collect();
        assert!(stalls.iter().all(|d| (0..=1_000_000).contains(d)));
        assert!(stalls.windows(2).any(|w| w[0] != w[1]), "each pass draws");
        assert_eq!(
            stalls[5],
            cpu_draw(3, &q, Draw::NewidleStall, 1, 5 * 7_919),
            "same seed, same stall"
        );
        let start: Vec<Ns> = (0..64)
            .map(|cpu| cpu_draw(3, &q, Draw::BootNewidle, cpu, 0))
            .collect();
        assert!(start.windows(2).any(|w| w[0] != w[1]), "each CPU draws");
        assert_eq!(start[9], cpu_draw(3, &q, Draw::BootNewidle, 9, 0));
        assert_ne!(
            start,
            (0..64)
                .map(|cpu| cpu_draw(4, &q, Draw::BootNewidle, cpu, 0))
                .collect::<Vec<_>>()
        );
        assert_eq!(
            (
                cpu_draw(3, &[], Draw::NewidleStall, 1, 5),
                cpu_draw(3, &[], Draw::BootNewidle, 1, 0)
            ),
            (0, 0)
        );
        // A running CPU's interrupt entry draws from its own table, apart from halt exits.
        let entries: Vec<Ns> = (0..64)
            .map(|j| cpu_draw(3, &q, Draw::IrqEntry, 1, j * 7_919))
            .collect();
        let exits: Vec<Ns> = (0..64)
            .map(|j| cpu_draw(3, &q, Draw::HaltExit, 1, j * 7_919))
            .collect();
        assert!(entries.iter().all(|d| (0..=1_000_000).contains(d)));
        assert_ne!(entries, exits);
        assert_eq!(cpu_draw(3, &[], Draw::IrqEntry, 1, 5), 0);
    }

    #[test]
    fn no_seed_no_delay() {
        assert_eq!(start_delay(0, 1_000_000, 3), 0);
    }

    #[test]
    fn delays_are_within_the_spread_and_differ_by_seed_and_thread() {
        let spread = 1_000_000;
        let a: Vec<Ns> = (0..64).map(|id| start_delay(1, spread, id)).collect();
        let b: Vec<Ns> = (0..64).map(|id| start_delay(2, spread, id)).collect();
        assert!(a.iter().chain(&b).all(|&d| d < spread));
        assert_ne!(a, b);
        assert!(a.windows(2).any(|w| w[0] != w[1]));
        // Same seed, same thread: same delay.
        assert_eq!(start_delay(1, spread, 5), a[5]);
        // Uniform: 64 draws in [0, 1 ms) have a mean near 0.5 ms (σ of the mean ≈ 36 µs).
        let mean = a.iter().sum::<Ns>() as f64 / 64.0;
        assert!((mean - 500_000.0).abs() < 150_000.0, "{mean}");
    }
}
