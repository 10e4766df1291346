//! The machine's accounting, checked after every event in debug builds (the test suite),
//! with the scheduler's invariants (`sched::invariants`). A broken one panics, naming it.

use super::engine::Engine;
use super::SIM_START;
use crate::sched::task::TaskState;
use crate::sched::Sched;

impl Engine {
    pub(super) fn check_invariants(&self, s: &Sched) {
        s.check_invariants(self.now);
        let elapsed = self.now - SIM_START;
        // busy + idle = elapsed per CPU, and the CPUs' busy time is the tasks' run time.
        let mut busy_total = 0;
        for (cpu, c) in self.cpus.iter().enumerate() {
            assert_eq!(
                c.busy_since.is_some(),
                s.cpu_curr(cpu).is_some(),
                "CPU {cpu} busy without a task, or idle with one"
            );
            let busy = c.busy_at(self.now);
            assert!(busy <= elapsed, "CPU {cpu}: busy {busy} ns of {elapsed} ns");
            busy_total += busy;
        }
        let run_total: u64 = s
            .tasks()
            .iter()
            .map(|t| {
                let open = (t.state == TaskState::Running).then(|| self.now - t.state_since);
                t.stats.run_ns + open.unwrap_or(0)
            })
            .sum();
        assert_eq!(
            busy_total, run_total,
            "the CPUs' busy time is not the tasks' run time"
        );
        // Each policy's time in state adds up to the time elapsed.
        for (d, st) in self.cpufreq.stats.iter().enumerate() {
            let charged: u64 = st.residency.iter().sum::<u64>() + (self.now - st.since);
            assert_eq!(
                charged, elapsed,
                "policy {d}: time in state is not the time elapsed"
            );
        }
    }
}
