//! What the scheduler did on a CPU, counted by kind of operation: the work the cost model
//! (`sim/overhead.rs`) charges as system time, and the summary's `ops` table.

use super::Sched;
use crate::time::Ns;

/// A kind of scheduler work, counted on the CPU that does it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// `context_switch` to another task (or to idle).
    ContextSwitch,
    /// `try_to_wake_up` onto the waker's CPU.
    WakeupLocal,
    /// A wakeup onto another CPU, counted there: the IPI and the enqueue it does.
    WakeupRemote,
    /// `sched_tick` of a busy CPU.
    Tick,
    /// `hrtimer_interrupt` for a sleep timer (the tick's own is in `Tick`).
    HrtimerIrq,
    /// A sleep: the `nanosleep` system call and the timer it queues (`hrtimer_nanosleep`).
    Nanosleep,
    /// A PELT update of one entity or cfs_rq level (`update_load_avg`).
    PeltUpdate,
    /// The legacy invariance's frequency and capacity scaling inside a PELT update (before
    /// clock_pelt, every update scaled its contribution).
    PeltScale,
    /// `update_rq_clock_pelt` of a busy CPU: clock_pelt's scaling, once per clock update.
    ClockPelt,
    /// A load-balance pass over one domain (`sched_balance_rq`).
    BalanceDomain,
    /// A sched group's statistics (`update_sg_lb_stats`).
    BalanceGroup,
    /// A task examined by `detach_tasks`.
    BalanceTask,
    /// A task moved to this CPU by the balancer or a wakeup (`set_task_cpu`).
    Migration,
    /// `update_h_load`: the start of a full walk of the groups (eager h_load).
    UpdateHLoad,
    /// One group visited by that walk (`tg_load_down`).
    TgLoadDown,
    /// One level of the lazy walk (`update_cfs_rq_h_load`).
    HLoadStep,
    /// One cfs_rq's blocked load decayed (`__update_blocked_fair`).
    BlockedUpdate,
    /// A `write` to a pipe (`pipe_write`), without its copy.
    PipeWrite,
    /// A `read` from a pipe (`pipe_read`), without its copy.
    PipeRead,
    /// A `write` to a Unix stream socket (`unix_stream_sendmsg`: an skb allocated and queued).
    UnixSend,
    /// A `read` from one (`unix_stream_recvmsg`: the skb consumed and freed).
    UnixRecv,
    /// A `futex` system call (`FUTEX_WAKE` or `FUTEX_WAIT`): its entry and exit and the hash
    /// bucket's lock, without the wakeup it makes or the switch away.
    Futex,
    /// 64 bytes copied between user space and the kernel (`copy_page_from_iter`,
    /// `skb_copy_datagram_iter`): the per-byte part of a pipe or socket call.
    CopyLine,
    /// rt-app's main thread from its `execve` to its first `pthread_create`: the loader,
    /// parsing the JSON, the threads' data (user and kernel time alike), on its CPU.
    AppInit,
    /// `pthread_create`: the `clone` system call and the new thread's stack, on the creator's
    /// CPU (rt-app's main thread).
    Clone,
    /// A new rt-app thread's set-up before the start barrier (`thread_body`: its name,
    /// policy, log buffer), on its CPU.
    ThreadInit,
    /// `fork` of a process: `kernel_clone` copying the creator's address space and files, on
    /// the creator's CPU (hackbench's main process).
    Fork,
    /// A new process's first steps, on its CPU: `ret_from_fork` and the page faults that copy
    /// what it writes of its parent's memory.
    ForkChild,
    /// A process's exit before it is a zombie (`do_exit`: `exit_mm` unmapping its address
    /// space, `exit_files`), on its CPU.
    Exit,
}

/// Every kind, in order.
pub const OPS: [Op; 29] = [
    Op::ContextSwitch,
    Op::WakeupLocal,
    Op::WakeupRemote,
    Op::Tick,
    Op::HrtimerIrq,
    Op::Nanosleep,
    Op::PeltUpdate,
    Op::PeltScale,
    Op::ClockPelt,
    Op::BalanceDomain,
    Op::BalanceGroup,
    Op::BalanceTask,
    Op::Migration,
    Op::UpdateHLoad,
    Op::TgLoadDown,
    Op::HLoadStep,
    Op::BlockedUpdate,
    Op::PipeWrite,
    Op::PipeRead,
    Op::UnixSend,
    Op::UnixRecv,
    Op::Futex,
    Op::CopyLine,
    Op::AppInit,
    Op::Clone,
    Op::ThreadInit,
    Op::Fork,
    Op::ForkChild,
    Op::Exit,
];

impl Op {
    /// Its name in summaries and cost tables (the kernel function's where there is one).
    pub fn name(self) -> &'static str {
        match self {
            Op::ContextSwitch => "context_switch",
            Op::WakeupLocal => "wakeup_local",
            Op::WakeupRemote => "wakeup_remote",
            Op::Tick => "tick",
            Op::HrtimerIrq => "hrtimer_irq",
            Op::Nanosleep => "nanosleep",
            Op::PeltUpdate => "pelt_update",
            Op::PeltScale => "pelt_scale",
            Op::ClockPelt => "clock_pelt",
            Op::BalanceDomain => "balance_domain",
            Op::BalanceGroup => "balance_group",
            Op::BalanceTask => "balance_task",
            Op::Migration => "migration",
            Op::UpdateHLoad => "update_h_load",
            Op::TgLoadDown => "tg_load_down",
            Op::HLoadStep => "h_load_step",
            Op::BlockedUpdate => "blocked_update",
            Op::PipeWrite => "pipe_write",
            Op::PipeRead => "pipe_read",
            Op::UnixSend => "unix_stream_sendmsg",
            Op::UnixRecv => "unix_stream_recvmsg",
            Op::Futex => "futex",
            Op::CopyLine => "copy_line",
            Op::AppInit => "rtapp_init",
            Op::Clone => "clone",
            Op::ThreadInit => "rtapp_thread_init",
            Op::Fork => "fork",
            Op::ForkChild => "fork_child",
            Op::Exit => "exit",
        }
    }
}

/// A CPU's operation counts, indexed by [`Op`], and their sum: the cost model tells a CPU
/// that did nothing new by the sum alone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OpCounts {
    counts: [u64; OPS.len()],
    total: u64,
}

impl OpCounts {
    #[inline(always)]
    pub fn add(&mut self, op: Op, n: u64) {
        self.counts[op as usize] += n;
        self.total += n;
    }

    #[inline(always)]
    pub fn get(&self, op: Op) -> u64 {
        self.counts[op as usize]
    }

    /// Every operation counted so far.
    #[inline(always)]
    pub fn total(&self) -> u64 {
        self.total
    }
}

/// Every CPU's operation counts, and the CPUs that counted something since the cost model
/// last looked (`take_moved`), so that it looks at those only.
#[derive(Debug, Clone, Default)]
pub struct OpLedger {
    cpus: Vec<OpCounts>,
    /// Listed in `moved`.
    listed: Vec<bool>,
    moved: Vec<u32>,
}

impl OpLedger {
    pub fn new(nr_cpus: usize) -> OpLedger {
        OpLedger {
            cpus: vec![OpCounts::default(); nr_cpus],
            listed: vec![false; nr_cpus],
            moved: Vec::with_capacity(nr_cpus),
        }
    }

    /// `n` operations `op` on `cpu`.
    #[inline(always)]
    pub fn add(&mut self, cpu: usize, op: Op, n: u64) {
        self.cpus[cpu].add(op, n);
        if !self.listed[cpu] {
            self.listed[cpu] = true;
            self.moved.push(cpu as u32);
        }
    }

    /// `cpu`'s counts.
    #[inline(always)]
    pub fn of(&self, cpu: usize) -> &OpCounts {
        &self.cpus[cpu]
    }

    /// The counts of `cpu`, to add to.
    #[inline(always)]
    pub fn cpu(&mut self, cpu: usize) -> CpuOps<'_> {
        CpuOps { ledger: self, cpu }
    }

    /// A CPU that counted something since it was last taken.
    #[inline]
    pub fn take_moved(&mut self) -> Option<usize> {
        let cpu = self.moved.pop()? as usize;
        self.listed[cpu] = false;
        Some(cpu)
    }
}

/// One CPU's counts in the ledger: where a class operation counts its work.
pub struct CpuOps<'a> {
    ledger: &'a mut OpLedger,
    cpu: usize,
}

impl CpuOps<'_> {
    #[inline(always)]
    pub fn add(&mut self, op: Op, n: u64) {
        self.ledger.add(self.cpu, op, n);
    }
}

table! {
    /// How many operations of one kind the scheduler did on one CPU, and the system time
    /// the cost model charged for them (0 when it is off).
    #[derive(Debug, Clone)]
    pub struct OpSummary {
        pub cpu: usize,
        pub op: String,
        pub count: u64,
        pub sys_ns: Ns,
    }
}

impl Sched {
    /// Each CPU's operation counts and their system time.
    pub fn op_summaries(&self) -> Vec<OpSummary> {
        let costs = &self.costs;
        let overhead = self.feat.overhead;
        (0..self.nr_cpu_ids())
            .flat_map(|cpu| {
                let counts = self.ops.of(cpu);
                OPS.iter().map(move |&op| OpSummary {
                    cpu,
                    op: op.name().to_string(),
                    count: counts.get(op),
                    sys_ns: if overhead {
                        counts.get(op) * costs.get(op)
                    } else {
                        0
                    },
                })
            })
            .collect()
    }
}
