//! The scheduler-cost model (on unless `--set overhead=off`): the work the scheduler counts on each CPU
//! (`rq.ops`) costs that CPU the platform's time per operation (`platform::OpCosts`), as
//! system time. A CPU does its kernel work at once and in order: its running thread makes
//! no progress meanwhile, and a thread switched in waits for the work still pending.
//!
//! Simplified: work is charged when the engine next looks at the CPU (at the end of the
//! event, or when it accounts the running thread's progress), not at the instant inside
//! the event where the kernel did it, which is the same simulated instant. Kernel time on
//! an idle CPU delays the next thread there but is not busy time for the energy model.

use crate::platform::OpCosts;
use crate::sched::ops::{Op, OpCounts};
use crate::time::Ns;

/// One CPU's kernel time.
#[derive(Debug, Clone, Copy, Default)]
struct CpuKernel {
    /// The operations already charged (`OpCounts::total`).
    charged: u64,
    /// System time charged so far: the price of those operations.
    sys_ns: Ns,
    /// Cache stalls queued so far (`sim/cache.rs`).
    stall_ns: Ns,
    /// Idle-state exits queued so far: time the CPU is held, kernel work for no one.
    held_ns: Ns,
    /// System-call work a preemption took off the CPU, and such work resumed on it
    /// (`sim/kernel_preempt.rs`).
    taken_ns: Ns,
    brought_ns: Ns,
    /// The kernel is busy on the CPU until then.
    until: Ns,
    /// Kernel time done by the last `stolen` call.
    mark: Ns,
}

/// The model, when on: costs and each CPU's kernel time.
pub struct Overhead {
    costs: Option<OpCosts>,
    cpus: Vec<CpuKernel>,
}

impl Overhead {
    /// Costs `costs` on `nr_cpus` CPUs, or none (counts only) when `on` is false.
    pub fn new(on: bool, costs: OpCosts, nr_cpus: usize) -> Overhead {
        Overhead {
            costs: on.then_some(costs),
            cpus: vec![CpuKernel::default(); nr_cpus],
        }
    }

    pub fn on(&self) -> bool {
        self.costs.is_some()
    }

    /// Charge `cpu` at `now` for what `ops` counts beyond what was charged; the ns charged.
    #[inline]
    pub fn sync(&mut self, cpu: usize, now: Ns, ops: &OpCounts) -> Ns {
        let Some(costs) = &self.costs else { return 0 };
        let k = &mut self.cpus[cpu];
        if k.charged == ops.total() {
            return 0;
        }
        let ns = costs.price(ops) - k.sys_ns;
        k.charged = ops.total();
        k.sys_ns += ns;
        k.until = k.until.max(now) + ns;
        ns
    }

    /// Kernel time `cpu` has done by `now`.
    #[inline]
    fn done(&self, cpu: usize, now: Ns) -> Ns {
        let k = &self.cpus[cpu];
        self.sys_ns(cpu) + k.stall_ns + k.held_ns - k.until.saturating_sub(now)
    }

    /// Kernel time `cpu` did since the last call: what its running thread did not run.
    #[inline]
    pub fn stolen(&mut self, cpu: usize, now: Ns) -> Ns {
        let done = self.done(cpu, now);
        let k = &mut self.cpus[cpu];
        let stolen = done - k.mark;
        k.mark = done;
        stolen
    }

    /// A cache stall of `ns` on `cpu` from `now`, after the work still queued.
    #[inline]
    pub fn stall(&mut self, cpu: usize, now: Ns, ns: Ns) {
        let k = &mut self.cpus[cpu];
        k.stall_ns += ns;
        k.until = k.until.max(now) + ns;
    }

    /// `cpu` leaves an idle state whose exit takes `ns` from `now`, before the work queued
    /// (none when the model is off: the idealized machine wakes at once).
    #[inline]
    pub fn hold(&mut self, cpu: usize, now: Ns, ns: Ns) {
        if self.costs.is_some() {
            let k = &mut self.cpus[cpu];
            k.held_ns += ns;
            k.until = k.until.max(now) + ns;
        }
    }

    /// Drop what is left at `now` of the last `ns` of stall queued on `cpu`: the part undone.
    #[inline]
    pub fn unstall(&mut self, cpu: usize, now: Ns, ns: Ns) -> Ns {
        let k = &mut self.cpus[cpu];
        let undone = ns.min(k.until.saturating_sub(now));
        k.stall_ns -= undone;
        k.until -= undone;
        undone
    }

    /// What `ops` cost (ns; nothing with the model off).
    pub fn price_of(&self, ops: &[(Op, u64)]) -> Ns {
        let Some(costs) = &self.costs else { return 0 };
        ops.iter().map(|&(op, n)| costs.get(op) * n).sum()
    }

    /// Take the last `ns` of the work queued on `cpu` off it, undone (a preempted system
    /// call's, which goes with its thread).
    pub fn take(&mut self, cpu: usize, ns: Ns) {
        let k = &mut self.cpus[cpu];
        k.taken_ns += ns;
        k.until -= ns;
    }

    /// Queue `ns` of work taken off a CPU on `cpu` from `now`, after the work queued.
    pub fn bring(&mut self, cpu: usize, now: Ns, ns: Ns) {
        let k = &mut self.cpus[cpu];
        k.brought_ns += ns;
        k.until = k.until.max(now) + ns;
    }

    /// Kernel work (and cache stalls) `cpu` has still to do at `now`.
    #[inline]
    pub fn pending(&self, cpu: usize, now: Ns) -> Ns {
        self.cpus[cpu].until.saturating_sub(now)
    }

    /// System time charged to `cpu`.
    pub fn sys_ns(&self, cpu: usize) -> Ns {
        let k = &self.cpus[cpu];
        k.sys_ns + k.brought_ns - k.taken_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::ops::{Op, OPS};

    fn costs() -> OpCosts {
        let mut c = OpCosts([0; OPS.len()]);
        c.0[Op::ContextSwitch as usize] = 1_000;
        c.0[Op::Tick as usize] = 300;
        c
    }

    #[test]
    fn work_is_charged_once_and_done_in_order() {
        let mut o = Overhead::new(true, costs(), 1);
        let mut ops = OpCounts::default();
        ops.add(Op::ContextSwitch, 2);
        ops.add(Op::Tick, 1);
        // 2 × 1000 + 300 at t = 10 000: busy until 12 300.
        assert_eq!(o.sync(0, 10_000, &ops), 2_300);
        assert_eq!(o.sync(0, 10_500, &ops), 0);
        assert_eq!(o.pending(0, 10_500), 1_800);
        // By 11 000, 1000 ns of it are done: that much of the thread's time was stolen.
        assert_eq!(o.stolen(0, 11_000), 1_000);
        assert_eq!(o.stolen(0, 20_000), 1_300);
        // A tick at 20 000 queues behind nothing: busy until 20 300.
        ops.add(Op::Tick, 1);
        o.sync(0, 20_000, &ops);
        assert_eq!((o.pending(0, 20_000), o.sys_ns(0)), (300, 2_600));
    }

    #[test]
    fn off_charges_nothing() {
        let mut o = Overhead::new(false, costs(), 1);
        let mut ops = OpCounts::default();
        ops.add(Op::ContextSwitch, 5);
        assert_eq!(
            (o.sync(0, 0, &ops), o.stolen(0, 10), o.sys_ns(0)),
            (0, 0, 0)
        );
    }
}
