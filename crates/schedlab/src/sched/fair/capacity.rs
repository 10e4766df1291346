//! The capacity a CPU has left for fair tasks (`update_cpu_capacity`), refreshed when the
//! periodic load balance visits the CPU's lowest domain. Simplified: only that visit is
//! modelled (no task moves), at the interval a balanced busy domain settles to.

use crate::sched::rq::Rq;
use crate::sched::topology::SchedDomain;
use crate::time::Ns;

/// `sched_balance_domains`' test for a busy CPU's domain `sd` at `now`: is it due (then it
/// is balanced now: `last_balance`), and when is it due next (`next_balance`)? Simplified:
/// the interval is the one a balanced busy domain settles to (`busy_balance_interval`), not
/// the one its own history gives.
pub fn balance_due(sd: &mut SchedDomain, hz: u32, tick_ns: Ns, now: Ns) -> (bool, Ns) {
    let interval = busy_balance_interval(sd, hz as u64) * tick_ns;
    let due = now >= sd.last_balance + interval;
    if due {
        sd.last_balance = now;
    }
    (due, sd.last_balance + interval)
}

/// `scale_rt_capacity`: the CPU's capacity less what RT and deadline tasks used by their PELT
/// signals, at least 1. schedlab has no IRQ time and no thermal pressure.
pub fn scale_rt_capacity(rq: &Rq) -> u64 {
    let used = rq.avg_rt.util_avg + rq.avg_dl.util_avg;
    rq.capacity.saturating_sub(used).max(1)
}

/// `get_sd_balance_interval(sd, cpu_busy)` in jiffies, the domain's interval backed off to
/// its maximum (`max_interval`, 2·`sd_weight` ms: a balanced domain doubles it up to there),
/// times `busy_factor`, less a jiffy. That stays below `max_load_balance_interval`,
/// HZ·#CPUs/10, as the domain spans at most #CPUs.
pub fn busy_balance_interval(sd: &SchedDomain, hz: u64) -> u64 {
    let ms = sd.max_interval * sd.busy_factor as u64;
    (ms * hz).div_ceil(1000) - 1 // msecs_to_jiffies
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::Kernel;
    use crate::platform::load_builtin;
    use crate::sched::features::Features;
    use crate::sched::topology::Topology;

    /// CPU 0's lowest domain on smp:`n`: one MC domain of `n` CPUs.
    fn mc(n: usize) -> SchedDomain {
        let topo = Topology::build(&load_builtin(&format!("smp:{n}")).unwrap(), 0);
        let sd = topo.lowest(0).unwrap().clone();
        assert_eq!((sd.name, sd.span.len()), ("MC", n));
        sd
    }

    #[test]
    fn the_busy_interval_is_32_ms_per_cpu_of_the_domain_less_a_jiffy() {
        // HZ=250: 2 CPUs, 64 ms = 16 jiffies; 4 CPUs, 128 ms = 32; 16 CPUs, 512 ms = 128.
        assert_eq!(busy_balance_interval(&mc(2), 250), 15);
        assert_eq!(busy_balance_interval(&mc(4), 250), 31);
        assert_eq!(busy_balance_interval(&mc(16), 250), 127);
        // HZ=100: 64 ms is 6.4 jiffies, rounded up to 7; HZ=300: 128 ms is 38.4, so 39.
        assert_eq!(busy_balance_interval(&mc(2), 100), 6);
        assert_eq!(busy_balance_interval(&mc(4), 300), 38);
    }

    #[test]
    fn a_domain_is_due_one_interval_after_its_last_balance() {
        // smp:4 at HZ=250: 31 jiffies of 4 ms, 124 ms, from the build at 0.
        let feat = Features::preset(Kernel::V6_12);
        assert_eq!(feat.hz, 250);
        let mut sd = mc(4);
        const MS: Ns = 1_000_000;
        let mut at = |now| balance_due(&mut sd, feat.hz, feat.tick_ns(), now);
        assert_eq!(at(124 * MS - 1), (false, 124 * MS));
        assert_eq!(
            at(124 * MS),
            (true, 248 * MS),
            "balanced now, due again an interval on"
        );
        assert_eq!(at(248 * MS - 1), (false, 248 * MS));
        assert_eq!(at(300 * MS), (true, 424 * MS));
        assert_eq!(sd.last_balance, 300 * MS);
    }
}
