//! `/proc/schedstat` at the end of a run (kernel/sched/stats.c `show_schedstat`): version 17
//! under 7.3 (domain names; lb_imbalance by migration type), 16 under 6.6 to 6.18 (each
//! domain's balance counters for busy, idle, then newly idle CPUs) or 15 under 6.1 (idle,
//! busy, newly idle); `timestamp` in jiffies since boot.
//!
//! Simplified: 6.18 prints version 16 here; the version 17 change ("sched: Report the
//! different kinds of imbalances in /proc/schedstat") was not read in a 6.18 source.

use std::fmt::Write;

use crate::kernel::Kernel;
use crate::sched::Sched;

/// The file's text for `sched` at jiffy `jiffies`.
pub fn render(sched: &Sched, kernel: Kernel, jiffies: u64) -> String {
    // Which `cpu_idle_type` each of the three column groups shows, by schedlab's (6.12) index.
    let (version, order) = match kernel {
        Kernel::V7_3 => (17, [0, 1, 2]),
        Kernel::V6_6 | Kernel::V6_12 | Kernel::V6_18 => (16, [0, 1, 2]),
        Kernel::V6_1 => (15, [1, 0, 2]),
    };
    let nr_cpus = sched.nr_cpu_ids();
    let mut out = format!("version {version}\ntimestamp {jiffies}\n");
    for (cpu, rq) in (0..nr_cpus).map(|cpu| (cpu, sched.cpu_rq(cpu))) {
        let s = &rq.stats;
        let _ = writeln!(
            out,
            "cpu{cpu} {} 0 {} {} {} {} {} {} {}",
            s.yld_count,
            s.sched_count,
            s.sched_goidle,
            s.ttwu_count,
            s.ttwu_local,
            s.rq_cpu_time,
            s.run_delay,
            s.pcount
        );
        for (d, sd) in sched.topology().domains[cpu].iter().enumerate() {
            let _ = write!(out, "domain{d} ");
            if version >= 17 {
                let _ = write!(out, "{} ", sd.name);
            }
            out.push_str(&cpumask(&sd.span, nr_cpus));
            let st = &sd.stats;
            for i in order {
                let _ = write!(
                    out,
                    " {} {} {}",
                    st.lb_count[i], st.lb_balanced[i], st.lb_failed[i]
                );
                if version >= 17 {
                    for imbalance in st.lb_imbalance[i] {
                        let _ = write!(out, " {imbalance}");
                    }
                } else {
                    let _ = write!(out, " {}", st.lb_imbalance[i].iter().sum::<u64>());
                }
                let _ = write!(
                    out,
                    " {} {} {} {}",
                    st.lb_gained[i], st.lb_hot_gained[i], st.lb_nobusyq[i], st.lb_nobusyg[i]
                );
            }
            // alb_*, then sched_balance_exec's and _fork's (unused), then the wakeup counts.
            let _ = writeln!(
                out,
                " {} {} {} 0 0 0 0 0 0 {} {} {}",
                st.alb_count,
                st.alb_failed,
                st.alb_pushed,
                st.ttwu_wake_remote,
                st.ttwu_move_affine,
                st.ttwu_move_balance
            );
        }
    }
    out
}

/// `%*pb` of a CPU set over `nr_cpus` bits: hex, most significant first, a comma between
/// 32-bit chunks, each chunk zero-padded to its width.
fn cpumask(span: &[usize], nr_cpus: usize) -> String {
    let chunks = nr_cpus.div_ceil(32);
    let mut out = String::new();
    for c in (0..chunks).rev() {
        let bits = (nr_cpus - 32 * c).min(32);
        let word =
            (span.iter().filter(|&&cpu| cpu / 32 == c)).fold(0u32, |w, &cpu| w | 1 << (cpu % 32));
        if !out.is_empty() {
            out.push(',');
        }
        let _ = write!(out, "{word:0width$x}", width = bits.div_ceil(4));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cpumask;

    #[test]
    fn cpumasks_print_as_the_kernel_prints_bitmaps() {
        assert_eq!(cpumask(&[0, 1], 2), "3");
        assert_eq!(cpumask(&[0, 1, 2, 3], 8), "0f");
        assert_eq!(cpumask(&[4, 5, 6, 7], 8), "f0");
        assert_eq!(cpumask(&[0, 1, 2, 3], 12), "00f");
        assert_eq!(cpumask(&[32, 33], 40), "03,00000000");
    }
}
