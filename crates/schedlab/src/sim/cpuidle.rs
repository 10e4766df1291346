//! The cpuidle governor (`drivers/cpuidle/governors/menu.c`'s rule, simplified): a CPU
//! going idle predicts its sleep from its next timer (`tick_nohz_get_sleep_length`: the
//! tick is stopped, so the earliest hrtimer armed on it), and enters the deepest state whose
//! target residency fits. Simplified: no correction factor or pattern detection, so a CPU
//! woken by another CPU (with no timer of its own) sleeps in its deepest state; the
//! scheduler's own timers (deadline, bandwidth) are not counted.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::platform::{IdleState, Platform};
use crate::time::Ns;

/// Each CPU's pending sleep timers: (hard expiry, task, wake generation); kept only for
/// CPUs with a choice of idle states.
pub(super) struct NextTimers {
    cpus: Vec<BinaryHeap<Reverse<(Ns, u32, u32)>>>,
    choice: Vec<bool>,
}

impl NextTimers {
    pub(super) fn new(plat: &Platform) -> NextTimers {
        let choice = plat.cpus.iter();
        let choice = choice.map(|c| plat.freq_domains[c.freq_domain].idle_states.len() > 1);
        NextTimers {
            cpus: (0..plat.nr_cpus()).map(|_| BinaryHeap::new()).collect(),
            choice: choice.collect(),
        }
    }

    /// Task `task`'s sleep (generation `gen`) ends at `expiry` by a timer on `cpu`; the
    /// timers already past are dropped (a CPU that never idles keeps no history).
    pub(super) fn arm(&mut self, cpu: usize, now: Ns, expiry: Ns, task: u32, gen: u32) {
        if !self.choice[cpu] {
            return;
        }
        let q = &mut self.cpus[cpu];
        while q.peek().is_some_and(|t| t.0 .0 < now) {
            q.pop();
        }
        q.push(Reverse((expiry, task, gen)));
    }

    /// The time from `now` to `cpu`'s next timer (None: none), the timers that fired or
    /// whose sleep ended otherwise (`live` says false) dropped.
    pub(super) fn sleep_length(
        &mut self,
        cpu: usize,
        now: Ns,
        live: impl Fn(u32, u32) -> bool,
    ) -> Option<Ns> {
        let q = &mut self.cpus[cpu];
        while let Some(&Reverse((at, task, gen))) = q.peek() {
            if at >= now && live(task, gen) {
                return Some(at - now);
            }
            q.pop();
        }
        None
    }
}

/// `menu_select`'s choice: the deepest of `states` (shallowest first) whose target
/// residency fits `sleep` (None: no timer, the deepest); 0 without states.
pub fn select(states: &[IdleState], sleep: Option<Ns>) -> usize {
    let fits = |s: &IdleState| sleep.is_none_or(|ns| s.min_residency <= ns);
    states.iter().rposition(fits).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::load_builtin;

    const MS: Ns = 1_000_000;

    #[test]
    fn the_deepest_state_that_fits_the_next_timer() {
        // hikey's states: WFI (0), cpu-sleep (1 ms), cluster-sleep (2.7 ms).
        let states = &load_builtin("hikey").unwrap().freq_domains[0].idle_states;
        let residency: Vec<Ns> = states.iter().map(|s| s.min_residency).collect();
        assert_eq!(select(states, Some(residency[1] - 1)), 0);
        assert_eq!(select(states, Some(residency[1])), 1);
        assert_eq!(select(states, Some(2 * MS)), 1);
        assert_eq!(select(states, Some(5 * MS)), 2);
        assert_eq!(select(states, None), 2);
        assert_eq!(select(&[], Some(MS)), 0);
    }

    #[test]
    fn stale_timers_are_skipped() {
        let mut t = NextTimers::new(&load_builtin("hikey").unwrap());
        t.arm(0, 0, 5 * MS, 1, 0);
        t.arm(0, 0, 3 * MS, 2, 0); // task 2's sleep ended early: generation 1 now
        t.arm(0, 0, 9 * MS, 3, 0);
        let live = |task: u32, gen: u32| !(task == 2 && gen == 0);
        assert_eq!(t.sleep_length(0, MS, live), Some(4 * MS));
        assert_eq!(t.sleep_length(0, 6 * MS, live), Some(3 * MS)); // task 1's fired
        assert_eq!(t.sleep_length(0, 10 * MS, live), None);
        // Arming drops what is past: a busy CPU's queue stays as long as its pending sleeps.
        for i in 0..100 {
            t.arm(0, i * MS, i * MS + 1, 4, i as u32);
        }
        assert_eq!(t.cpus[0].len(), 1);
    }
}
