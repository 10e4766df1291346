//! `sched_rng` (kernel/sched/sched.h): each CPU's pseudo-random generator, `prandom_u32_state`
//! (lib/random32.c), L'Ecuyer's four-component Tausworthe generator (taus113). Simplified:
//! the kernel seeds it at random at boot; schedlab seeds it from the run's seed and the CPU,
//! so that a run repeats.

/// `struct rnd_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RndState([u32; 4]);

/// One component's step: shift-register parameters (q, s, mask, r) of taus113.
#[inline(always)]
fn tausworthe(s: u32, a: u32, b: u32, c: u32, d: u32) -> u32 {
    ((s & c) << d) ^ (((s << a) ^ s) >> b)
}

impl RndState {
    /// `prandom_seed_state`: each component at least its minimum, then ten warm-up draws.
    pub fn seeded(seed: u64) -> RndState {
        let i = ((seed >> 32) ^ (seed << 10) ^ seed) as u32;
        let at_least = |x: u32, m: u32| if x < m { x + m } else { x };
        let mut s = RndState([
            at_least(i, 2),
            at_least(i, 8),
            at_least(i, 16),
            at_least(i, 128),
        ]);
        for _ in 0..10 {
            s.next_u32();
        }
        s
    }

    /// `prandom_u32_state`.
    pub fn next_u32(&mut self) -> u32 {
        let s = &mut self.0;
        s[0] = tausworthe(s[0], 6, 13, 0xffff_fffe, 18);
        s[1] = tausworthe(s[1], 2, 27, 0xffff_fff8, 2);
        s[2] = tausworthe(s[2], 13, 21, 0xffff_fff0, 7);
        s[3] = tausworthe(s[3], 3, 12, 0xffff_ff80, 13);
        s[0] ^ s[1] ^ s[2] ^ s[3]
    }
}

#[cfg(test)]
mod tests {
    use super::RndState;

    /// One step from the components' minimums (2, 8, 16, 128), by hand: each shifts its
    /// masked value left by r, and what (s << q) ^ s keeps above bit b is nothing yet, so
    /// s1 = 2 << 18 = 524288, s2 = 8 << 2 = 32, s3 = 16 << 7 = 2048, s4 = 128 << 13 =
    /// 1048576, and the draw is their xor, 1574944.
    #[test]
    fn one_step_by_hand() {
        let mut s = RndState([2, 8, 16, 128]);
        assert_eq!(s.next_u32(), 524_288 ^ 32 ^ 2048 ^ 1_048_576);
        assert_eq!(s.0, [524_288, 32, 2048, 1_048_576]);
    }

    #[test]
    fn a_seed_repeats_and_seeds_differ() {
        let draws = |seed| {
            let mut s = RndState::seeded(seed);
            (0..4).map(|_| s.next_u32()).collect::<Vec<_>>()
        };
        assert_eq!(draws(1), draws(1));
        assert_ne!(draws(1), draws(2));
    }
}
