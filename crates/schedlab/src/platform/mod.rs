//! Platforms: CPUs with their capacity, topology, frequency domains (OPPs and power) and idle
//! states. Descriptions are TOML files (`platforms/*.toml`, built in) or `smp:N`.

pub mod cache;
mod costs;
mod cpulist;
mod load;
mod plat_info;

pub use costs::OpCosts;
pub use cpulist::{format_cpulist, parse_cpulist};
pub(crate) use load::work_stretch;
pub use load::{builtin_names, load_builtin, load_file, parse};
pub use plat_info::{is_plat_info, load as load_plat_info};

use crate::kernel::Kernel;
use crate::sched::ops::Op;
use crate::time::Ns;

/// The spread of a timer interrupt's lateness on `qemu-tcg:N` (see [`Platform::qemu_tcg`]).
pub const QEMU_TCG_IRQ_JITTER_NS: Ns = 200_000;
/// How far apart the vCPUs of `qemu-tcg:N` take the interrupts of one expiry (see
/// [`Platform::qemu_tcg`]).
pub const QEMU_TCG_IRQ_SKEW_NS: Ns = 30_000;
/// How much more slowly `qemu-tcg:1` (icount) does the kernel's work than the default costs'
/// machine (see [`Platform::qemu_tcg`]).
pub const QEMU_TCG_COST_SCALE: f64 = 5.5;
/// The same for `qemu-tcg:N` with N ≥ 2 (multi-threaded TCG, in host time).
pub const QEMU_MTTCG_COST_SCALE: f64 = 21.0;
/// How much of 6.1's time the 6.12 kernel takes for the same work on `qemu-tcg:N` (see
/// [`Platform::qemu_tcg`]).
pub const QEMU_TCG_6_12_WORK: f64 = 0.856;
/// How much of 6.12's time the 7.3 kernel takes for a wakeup and a switch on `qemu-tcg:N`
/// (see [`Platform::qemu_tcg`]).
pub const QEMU_TCG_7_3_WORK: [(Op, f64); 3] = [
    (Op::WakeupLocal, 1.595),
    (Op::WakeupRemote, 1.595),
    (Op::ContextSwitch, 1.158),
];
/// How long a halted vCPU of `qemu-tcg:N` (N ≥ 2) takes to run again once woken: 20
/// quantiles, at 2.5%, 7.5%, … 97.5% (see [`Platform::qemu_tcg`]).
pub const QEMU_TCG_HALT_EXIT_NS: [Ns; 20] = [
    31_200, 34_600, 35_800, 36_600, 37_500, 38_500, 40_000, 41_600, 43_800, 46_200, 48_500, 51_600,
    56_300, 60_300, 63_500, 66_700, 71_300, 75_900, 81_400, 109_500,
];
/// How much longer than its counted work a newly idle pass of `qemu-tcg:N` (N ≥ 2) takes:
/// 100 quantiles, at 0.5%, 1.5%, … 99.5% (see [`Platform::qemu_tcg`]).
pub const QEMU_TCG_NEWIDLE_STALL_NS: [Ns; 100] = [
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 300, 500, 700, 900, 1_200, 1_400,
    1_700, 2_000, 2_300, 2_500, 2_900, 3_100, 3_500, 3_900, 4_300, 4_500, 4_900, 5_300, 5_700,
    6_100, 6_600, 7_200, 7_700, 8_200, 8_800, 9_300, 10_000, 10_700, 11_500, 12_300, 13_500,
    15_000, 16_300, 17_800, 19_800, 21_400, 23_900, 26_000, 28_700, 32_600, 37_400, 43_600, 52_100,
    61_300, 72_200, 82_600, 100_300, 120_900, 166_400,
];
/// What each CPU's newly idle passes of `qemu-tcg:N` (N ≥ 2) cost before the workload
/// starts, under 6.1 and 6.12: 20 quantiles each, at 2.5%, 7.5%, … 97.5% (see
/// [`Platform::qemu_tcg`]).
pub const QEMU_TCG_START_NEWIDLE_COST_NS: [(Kernel, [Ns; 20]); 2] = [
    (
        Kernel::V6_1,
        [
            78_624, 108_544, 114_787, 126_857, 153_425, 156_021, 158_383, 165_993, 181_935,
            218_672, 232_633, 543_862, 655_987, 747_840, 755_208, 1_777_000, 2_798_947, 2_843_735,
            3_224_770, 6_516_537,
        ],
    ),
    (
        Kernel::V6_12,
        [
            81_021, 81_654, 86_704, 130_271, 146_667, 207_381, 212_662, 246_455, 409_607, 428_745,
            436_095, 470_534, 482_791, 498_194, 518_738, 549_171, 573_649, 578_047, 582_271,
            855_112,
        ],
    ),
];
/// How long a running vCPU of `qemu-tcg:N` (N ≥ 2) takes a sleeper's timer interrupt: 20
/// quantiles, at 2.5%, 7.5%, … 97.5% (see [`Platform::qemu_tcg`]).
pub const QEMU_TCG_IRQ_ENTRY_NS: [Ns; 20] = [
    30_000, 45_000, 52_000, 57_000, 61_000, 66_000, 71_000, 76_000, 80_000, 83_000, 88_000, 93_000,
    100_000, 106_000, 114_000, 124_000, 132_000, 144_000, 165_000, 225_000,
];
/// qemu-tcg:1's costs that differ from the scaled table (icount ns), measured in the
/// messaging-1@6.1 record (docs/overhead.md): perf bench sched messaging's main process forks
/// a child every 833 µs (the median), each child runs 224 µs before it waits for the start
/// and 2.02 ms from its last read to its exit (a receiver's last run), and each sends and
/// receives a message in 4.13 and 2.54 µs of CPU (the medians over senders and receivers of
/// their CPU time, their first and last runs aside, over their 400 messages).
pub const QEMU_TCG_COSTS: [(&str, u64); 5] = [
    ("fork_ns", 833_000),
    ("fork_child_ns", 224_000),
    ("exit_ns", 2_020_000),
    ("unix_stream_sendmsg_ns", 4_130),
    ("unix_stream_recvmsg_ns", 2_540),
];
/// The same for qemu-tcg:N, N ≥ 2 (host ns), in the messaging-2@6.1 record, and rt-app's
/// main thread's set-up before its first thread: 29.3 ms of CPU, the median over the fifteen
/// 2-vCPU rt-app records under 6.1 (22.9-76.4 ms; 6.12's: 31.6, 16.0-69.2).
pub const QEMU_MTTCG_COSTS: [(&str, u64); 6] = [
    ("fork_ns", 1_625_000),
    ("fork_child_ns", 635_000),
    ("exit_ns", 3_645_000),
    ("unix_stream_sendmsg_ns", 9_340),
    ("unix_stream_recvmsg_ns", 8_910),
    ("rtapp_init_ns", 29_260_000),
];
/// The host factors `qemu-tcg:N@K` accepts (see [`Platform::qemu_tcg`]).
pub const QEMU_HOST_RANGE: std::ops::RangeInclusive<f64> = 0.1..=4.0;
/// The most a platform's `irq_jitter_ns`, `irq_skew_ns` or a `halt_exit_ns` may be (1 ms).
pub const MAX_TIMING_NS: Ns = 1_000_000;
/// How much longer than rt-app's calibration a job's `run` takes on `qemu-tcg:1`, in 1/1000
/// (see [`Platform::qemu_tcg`]).
pub const QEMU_TCG_WORK_STRETCH: [u64; 1] = [1_019];
/// The same on `qemu-tcg:N`, N ≥ 2: its distribution, as 20 quantiles (at 2.5%, 7.5%, …
/// 97.5%), each the mean of the ten 2-vCPU periodic records' own (docs/fidelity.md).
pub const QEMU_MTTCG_WORK_STRETCH: [u64; 20] = [
    946, 965, 978, 991, 1_003, 1_013, 1_026, 1_039, 1_052, 1_066, 1_084, 1_112, 1_154, 1_188,
    1_232, 1_271, 1_315, 1_359, 1_406, 1_530,
];
/// The range of a `work_stretch` quantile (1/1000): half to four times the calibration.
pub const WORK_STRETCH_RANGE: std::ops::RangeInclusive<u64> = 500..=4_000;

/// A `Kthread` (its span and times in ms).
const fn kthread(
    (comm, pid): (&'static str, u32),
    per_cpu: bool,
    span_ms: u64,
    wakes: &'static [(Kernel, &'static [(Ns, Ns)])],
) -> Kthread {
    Kthread {
        comm,
        pid,
        per_cpu,
        span_ns: span_ms * 1_000_000,
        wakes,
    }
}

/// The Debian guest's own kernel threads on `qemu-tcg:1` (icount), as the up-nice-2 records
/// show them from rt-app's start, whose guests are in the same state as every 1-vCPU rt-app
/// record's (see [`Platform::qemu_tcg`]): kcompactd0 every 512 ms, the others' wakeups in
/// the 3.16 s those records span, repeated every 3.2 s. Each wakeup's time counts from the
/// first tick after rt-app's start (`QEMU_TCG_KTHREADS_FROM`): a whole number of jiffies, as
/// a timer-wheel timer expires on a tick, and the µs past that tick the record's
/// `sched_waking` came (3 at the median under 6.1 and 6.12, 4 under 7.3, more for a wakeup
/// the one before it chained). Its work is its stint from its switch in to its switch out
/// less the 3.6, 3.1 and 3.5 µs that schedlab's costs charge around it under 6.1, 6.12 and
/// 7.3.
#[rustfmt::skip]
pub const QEMU_TCG_KTHREADS: [Kthread; 4] = [
    kthread(("kcompactd0", 34), false, 512, &[
        (Kernel::V6_1, &[(172_003_000, 1_440)]),
        (Kernel::V6_12, &[(480_003_000, 1_780)]),
        (Kernel::V7_3, &[(324_004_000, 2_100)]),
    ]),
    kthread(("kworker/{cpu}:1", 11), true, 3_200, &[
        (Kernel::V6_1, &[
            (716_003_000, 620), (812_003_000, 2_900), (1_132_003_000, 1_530),
            (1_484_003_000, 4_000), (1_484_017_000, 500), (1_804_003_000, 2_580),
            (2_796_003_000, 1_050), (3_148_003_000, 1_290),
        ]),
        (Kernel::V6_12, &[
            (416_003_000, 1_610), (512_003_000, 4_380), (864_003_000, 2_450),
            (1_440_003_000, 5_700), (1_440_030_000, 1_260), (1_504_008_000, 4_130),
            (2_496_003_000, 2_380), (2_880_003_000, 2_450),
        ]),
        (Kernel::V7_3, &[
            (324_009_000, 2_640), (932_004_000, 433_660), (1_252_004_000, 3_130),
            (1_860_004_000, 6_640), (1_860_033_000, 1_600), (1_924_004_000, 6_350),
            (2_916_004_000, 6_380),
        ]),
    ]),
    kthread(("rcu_preempt", 15), false, 3_200, &[
        (Kernel::V6_1, &[
            (3_000, 1_440), (20_000, 1_440), (4_003_000, 520), (3_108_003_000, 600),
            (3_112_003_000, 500), (3_152_003_000, 520),
        ]),
        (Kernel::V6_12, &[
            (4_003_000, 2_450), (8_015_000, 2_250), (12_003_000, 1_490), (3_112_003_000, 1_460),
            (3_116_004_000, 1_370), (3_156_003_000, 1_440),
        ]),
        (Kernel::V7_3, &[
            (4_000, 2_180), (8_004_000, 2_280), (3_112_004_000, 2_100),
            (3_120_004_000, 2_350),
        ]),
    ]),
    kthread(("kworker/u4:3", 46), false, 3_200, &[
        (Kernel::V6_1, &[
            (1_484_009_000, 3_830), (1_612_003_000, 2_420),
        ]),
        (Kernel::V6_12, &[
            (1_440_007_000, 3_460), (1_440_021_000, 5_220), (1_952_003_000, 7_950),
        ]),
        (Kernel::V7_3, &[
            (1_764_004_000, 4_690), (1_860_023_000, 6_150), (2_372_005_000, 8_610),
        ]),
    ]),
];
/// Where `QEMU_TCG_KTHREADS`' timelines count from: the first tick after rt-app's start (its
/// first `pthread_create` less its set-up, `rtapp_init`: 1.249 ms under 6.1, 1.069 ms under
/// 6.12 and 7.3) in the up-nice-2 records, 3.815, 0.474 and 3.526 ms after it.
pub const QEMU_TCG_KTHREADS_FROM: [(Kernel, Ns); 3] = [
    (Kernel::V6_1, 3_815_000),
    (Kernel::V6_12, 474_000),
    (Kernel::V7_3, 3_526_000),
];
/// The same on `qemu-tcg:N`, N ≥ 2 (host time), whose records' guests differ run to run:
/// each periodic (the records' rates), its work the 2-vCPU records' median stint less the
/// 13.7, 11.7 and 13.4 µs of schedlab's costs around it.
#[rustfmt::skip]
pub const QEMU_MTTCG_KTHREADS: [Kthread; 4] = [
    kthread(("kcompactd0", 39), false, 512, &[
        (Kernel::V6_1, &[(64_000_000, 65_850)]),
        (Kernel::V6_12, &[(64_000_000, 85_220)]),
        (Kernel::V7_3, &[(64_000_000, 94_280)]),
    ]),
    kthread(("kworker/{cpu}:1", 10), true, 512, &[
        (Kernel::V6_1, &[(192_000_000, 94_050)]),
        (Kernel::V6_12, &[(192_000_000, 113_320)]),
        (Kernel::V7_3, &[(192_000_000, 124_180)]),
    ]),
    kthread(("rcu_preempt", 18), false, 200, &[
        (Kernel::V6_1, &[(20_000_000, 55_750)]),
        (Kernel::V6_12, &[(20_000_000, 63_520)]),
        (Kernel::V7_3, &[(20_000_000, 51_880)]),
    ]),
    kthread(("kworker/u8:4", 104), false, 1_024, &[
        (Kernel::V6_1, &[(448_000_000, 89_350)]),
        (Kernel::V6_12, &[(448_000_000, 134_020)]),
        (Kernel::V7_3, &[(448_000_000, 136_980)]),
    ]),
];

/// One operating performance point of a frequency domain.
#[derive(Debug, Clone, PartialEq)]
pub struct Opp {
    pub khz: u32,
    /// Active power of one CPU at this OPP, in mW (the Energy Model's `power`), if known.
    pub power_mw: Option<f64>,
    /// Extra power of the cluster as a whole at this OPP, in mW, if known.
    pub cluster_power_mw: Option<f64>,
}

/// One idle state (cpuidle), shallowest first.
#[derive(Debug, Clone, PartialEq)]
pub struct IdleState {
    pub name: String,
    pub exit_latency: Ns,
    pub min_residency: Ns,
    pub power_mw: Option<f64>,
    pub cluster_power_mw: Option<f64>,
}

/// A frequency domain: the CPUs that share one clock (a cpufreq policy).
#[derive(Debug, Clone, PartialEq)]
pub struct FreqDomain {
    pub name: String,
    pub cpus: Vec<usize>,
    /// Ascending frequency.
    pub opps: Vec<Opp>,
    pub idle_states: Vec<IdleState>,
    /// `cpuinfo.transition_latency` in ns; 0 when unknown.
    pub transition_latency: Ns,
}

impl FreqDomain {
    pub fn max_khz(&self) -> u32 {
        self.opps.last().map_or(0, |o| o.khz)
    }

    pub fn min_khz(&self) -> u32 {
        self.opps.first().map_or(0, |o| o.khz)
    }
}

/// One CPU and where it sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cpu {
    pub id: usize,
    /// `arch_scale_cpu_capacity`: the capacity at the domain's highest OPP (≤ 1024).
    pub capacity_orig: u32,
    pub freq_domain: usize,
    /// SMT core: CPUs with the same core are hardware threads of one core.
    pub core: usize,
    pub cluster: usize,
    /// Last-level cache id.
    pub llc: usize,
    pub package: usize,
    pub numa: usize,
}

/// A kernel thread of the machine's own (`sim/kthread.rs`): it wakes at the times of its
/// span, which repeats from the workload's start, each time on a timer, and runs each
/// wakeup's work.
#[derive(Debug, Clone, PartialEq)]
pub struct Kthread {
    /// Its comm (`{cpu}`: a per-CPU thread's CPU).
    pub comm: &'static str,
    pub pid: u32,
    /// One thread per CPU, each bound to it (else one, on any CPU).
    pub per_cpu: bool,
    pub span_ns: Ns,
    /// Each wakeup's time in the span and its work (ns), ascending, under each kernel (the
    /// newest up to the run's).
    pub wakes: &'static [(Kernel, &'static [(Ns, Ns)])],
}

impl Kthread {
    /// Its wakeups under `kernel`.
    pub fn wakes_for(&self, kernel: Kernel) -> &'static [(Ns, Ns)] {
        let wakes: &'static [(Kernel, &'static [(Ns, Ns)])] = self.wakes;
        for_kernel::<&[(Ns, Ns)]>(wakes, kernel, &wakes[0].1)
    }
}

/// A described machine.
#[derive(Debug, Clone, PartialEq)]
pub struct Platform {
    pub name: String,
    pub description: String,
    pub cpus: Vec<Cpu>,
    pub freq_domains: Vec<FreqDomain>,
    /// What the kernel's operations cost here (the cost model's table).
    pub costs: OpCosts,
    /// The table from a kernel preset on whose work costs differently here (none: `costs`).
    pub kernel_costs: Vec<(Kernel, OpCosts)>,
    /// Its caches, for the cache-affinity model (None: not described).
    pub cache: Option<cache::CacheSpec>,
    /// How late a timer interrupt (a tick, a sleep timer, a scheduler timer) may come after
    /// its expiry: the spread of its entry latency, common to the CPUs' timers of one expiry
    /// (`sim/jitter.rs`; 0: on the expiry).
    pub irq_jitter_ns: Ns,
    /// How far apart the CPUs take the interrupts of one expiry: the spread of each CPU's own
    /// part of the lateness.
    pub irq_skew_ns: Ns,
    /// How long an idle CPU takes to get going for an interrupt or a wakeup (a halted vCPU's
    /// host thread woken by the emulator): quantiles of its distribution at evenly spaced
    /// probabilities, ascending, each draw from the seed (`sim/jitter.rs`). Simplified: none
    /// on hardware, whose idle states' exit latencies are not paid (the cpuidle model picks
    /// states by the next timer alone, without the menu and teo governors' prediction of
    /// short idles that keeps a busy CPU shallow).
    pub halt_exit_ns: Vec<Ns>,
    /// How long a running CPU takes a sleeper's timer interrupt (an emulated vCPU
    /// interrupted by the emulator's own thread): quantiles as `halt_exit_ns`'s. Empty: at
    /// once.
    pub irq_entry_ns: Vec<Ns>,
    /// How much longer than calibrated a job's `run` work takes (an emulator's or a
    /// hypervisor's CPUs run slower than rt-app's calibration found, and unevenly): quantiles
    /// of its distribution at evenly spaced probabilities, in 1/1000, ascending; each job
    /// draws from the seed (`sim/jitter.rs`). Empty: as calibrated.
    pub work_stretch: Vec<u64>,
    /// How much longer than its counted work a newly idle balance pass takes (an emulated
    /// CPU stalls, and the pass's cost, `max_newidle_lb_cost`, holds the longest): quantiles
    /// of its distribution at evenly spaced probabilities, ascending, each pass's a draw from
    /// the seed (`sim/jitter.rs`). Empty: none.
    pub newidle_stall_ns: Vec<Ns>,
    /// What each CPU's domains' newly idle passes cost before the workload starts (the
    /// boot's: `max_newidle_lb_cost` then): quantiles as `newidle_stall_ns`'s, each CPU's a
    /// draw from the seed. Empty: 0, a machine whose passes so far cost nothing.
    pub start_newidle_cost_ns: Vec<Ns>,
    /// The same from a kernel preset on whose passes cost differently here (none:
    /// `start_newidle_cost_ns`).
    pub kernel_start_newidle_cost_ns: Vec<(Kernel, Vec<Ns>)>,
    /// Its own kernel threads, which wake on their timers whatever the workload does
    /// (`sim/kthread.rs`; none: the workload's threads alone).
    pub kthreads: Vec<Kthread>,
    /// Under each kernel (the newest up to the run's), where their timelines count from: a
    /// tick this long after the workload's start (none: the start, a tick).
    pub kthreads_from: &'static [(Kernel, Ns)],
}

impl Platform {
    /// How long after the workload's start its kernel threads' timelines count from under
    /// `kernel` (`kthreads_from`).
    pub fn kthreads_from_for(&self, kernel: Kernel) -> Ns {
        *for_kernel(self.kthreads_from, kernel, &0)
    }

    pub fn nr_cpus(&self) -> usize {
        self.cpus.len()
    }

    /// `smp:N`: N identical CPUs of capacity 1024, one cluster, one frequency domain at 1 GHz.
    pub fn smp(n: usize) -> Platform {
        let cpus = (0..n)
            .map(|id| Cpu {
                id,
                capacity_orig: 1024,
                freq_domain: 0,
                core: id,
                cluster: 0,
                llc: 0,
                package: 0,
                numa: 0,
            })
            .collect();
        Platform {
            name: format!("smp:{n}"),
            description: format!("{n} identical CPUs of capacity 1024, one frequency domain"),
            cpus,
            freq_domains: vec![FreqDomain {
                name: "cpus".into(),
                cpus: (0..n).collect(),
                opps: vec![Opp {
                    khz: 1_000_000,
                    power_mw: None,
                    cluster_power_mw: None,
                }],
                idle_states: vec![],
                transition_latency: 0,
            }],
            costs: OpCosts::default(),
            kernel_costs: vec![],
            cache: None,
            irq_jitter_ns: 0,
            irq_skew_ns: 0,
            halt_exit_ns: vec![],
            irq_entry_ns: vec![],
            work_stretch: vec![],
            newidle_stall_ns: vec![],
            start_newidle_cost_ns: vec![],
            kernel_start_newidle_cost_ns: vec![],
            kthreads: vec![],
            kthreads_from: &[],
        }
    }

    /// `qemu-tcg:N`: the machine the oracle boots (QEMU TCG, N vCPUs, `-cpu max`): `smp:N`
    /// with the emulator's measured timing (docs/overhead.md, oracle/README.md).
    /// - One vCPU runs under icount (one guest instruction a ns): its timers fire on time
    ///   (the deadline record's 10 ms wakeups lie within 25 ns of their period) and its
    ///   kernel does its work `QEMU_TCG_COST_SCALE` times as slowly as the default costs'
    ///   machine (fitted to the 1-vCPU records' wakeup latencies of an idle CPU under 6.1).
    /// - Two or more run multi-threaded TCG in host time: the kernel's work takes
    ///   `QEMU_MTTCG_COST_SCALE` times the defaults (fitted to perf bench pipe's rate in the
    ///   pipe-2 records under 6.1); a halted vCPU takes a draw from `QEMU_TCG_HALT_EXIT_NS` to
    ///   run again (the pipe-2 records' wakeup latencies across vCPUs, both kernels' quantiles
    ///   averaged, less the 12.4 µs schedlab's costs give them: median 47 µs, mean 54 µs),
    ///   and as long again before it takes a timer interrupt (the emulator's kick); a running
    ///   vCPU takes a sleeper's timer interrupt by a draw from `QEMU_TCG_IRQ_ENTRY_NS` (the
    ///   rt-push records' RT wakeups of a running vCPU, 777 of both kernels: 45-240 µs from
    ///   `sched_waking` to the switch, median 100, less the 15 µs the scaled costs give them,
    ///   which price the path as the kernel does under icount: 4.1 and 3.5 µs against 4.5 and
    ///   4.7 in a 1-vCPU recording; simplified: not the tick). The periodic-4 records agree: their two vCPUs wake
    ///   their first sleeper of a period 17 µs apart at the median (57 µs at p90), and each
    ///   vCPU its second sleeper 55 µs after its first, where busy vCPUs' ticks lie within
    ///   30 µs and their wakeups 6 µs apart. Timer interrupts
    ///   come up to `QEMU_TCG_IRQ_JITTER_NS` late (the hogs records' tick-driven switches lie
    ///   110-260 µs apart from p10 to p90 around their jiffy), the vCPUs' interrupts of one
    ///   expiry within `QEMU_TCG_IRQ_SKEW_NS` of each other (the vCPUs' ticks within 30 µs).
    /// - rt-app's `run` work takes longer than its calibration says: 1.9% on one vCPU (the
    ///   1-vCPU records' unpreempted jobs run 1.8-2.4% longer than schedlab's, deterministically),
    ///   and on two by a draw per job from `QEMU_MTTCG_WORK_STRETCH` (the 2-vCPU periodic
    ///   records' unpreempted jobs over schedlab's: p10 0.97, median 1.06, p90 1.41, mean
    ///   1.14; the kernel's CPUs slow down for hundreds of ms at a time, most often while the
    ///   other vCPU idles. Simplified: each job draws alone, and one rate per job).
    /// - On two or more, newly idle balancing meets the emulator's costs: each CPU's domains
    ///   start with `max_newidle_lb_cost` drawn from `QEMU_TCG_START_NEWIDLE_COST_NS` (the
    ///   oracle read it as rt-app started, 10 runs of each kernel: what the boot's passes
    ///   cost), and each pass takes a draw from `QEMU_TCG_NEWIDLE_STALL_NS` beyond its priced
    ///   work (a kprobe on `sched_balance_newidle` in periodic-12's guest, 3,250 passes of
    ///   both kernels: each pass's time over their median, 10.5 µs). Simplified: rarer stalls
    ///   of milliseconds (5 of 18 runs ended with a pass of 0.9-4.7 ms) are not drawn.
    /// - A process's fork, first steps and exit and a socket's send and receive cost what the
    ///   messaging records measured (`QEMU_TCG_COSTS`, `QEMU_MTTCG_COSTS`), not the scaled
    ///   table's figures (a socket call: 0.6-0.75 times theirs under icount, 0.45-0.55 on 2).
    /// - These costs are 6.1's. The 6.12 kernel does the same work in `QEMU_TCG_6_12_WORK` of
    ///   the time: perf bench pipe's round trip under icount takes it 16.1 µs against 6.1's
    ///   18.8. Messaging's sends agree (8.2 µs of CPU a message against 9.2 on one vCPU, 16.1
    ///   against 18.5 on two). Simplified: one factor for every operation (6.12 forks more
    ///   slowly on one vCPU, 955 µs apart against 833, and its receivers' reads cost 0.98
    ///   of 6.1's there).
    /// - On two or more vCPUs the scaled table and the emulator's latencies are host time on
    ///   the host they were fitted on (perf bench pipe across two vCPUs in the records of
    ///   2026-11-26), and hosts differ: the same 6.12 guest's pipe ran 6,586 round trips a
    ///   second there and 12,438 on 2026-11-28 (wakeup latency p50 54 and 33 µs), where
    ///   perf messaging, whose socket calls have costs measured on their own, ran 55,087
    ///   messages a second under 7.3 on 2026-11-27 and 68,071 on 2026-11-28, and user code
    ///   within 8% (schbench's timed matrix work). `host` (`qemu-tcg:N@K`) multiplies the
    ///   scaled table (fitted on pipe's round trips: wakeups across vCPUs, their IPIs and
    ///   idle entries) and the latencies: the halted vCPUs' exits, the interrupts' lateness
    ///   and skew, and the newly idle passes' stalls. Not a running vCPU's interrupt entry:
    ///   rt-push's RT wakeups of a running vCPU took 73-107 µs at the median under 6.12 and
    ///   7.3 on 2026-11-28's host (K 0.4-0.6) as on the reference host. Simplified: one
    ///   factor for all of them, none for the measured costs (perf messaging's rate on
    ///   2026-11-28 contradicts it: docs/overhead.md).
    /// - The 7.3 kernel wakes and switches more slowly than 6.12 (`QEMU_TCG_7_3_WORK`): in
    ///   perf bench pipe under icount, where both block each round trip (6.12 with
    ///   NO_WAKEUP_PREEMPTION, so that its tasks do what 7.3's do), `sched_waking` to
    ///   `sched_wakeup` takes 2.714 µs against 1.859 (855 ns over 6.12's 1,436 ns wakeup), and
    ///   the wakeup to the next `sched_waking` across the switch 7.985 against 7.532 (453 ns
    ///   over its 2,872 ns switch). The round trip: 21.45 µs against 18.95 (46,622 and 52,770
    ///   ops/s). Untraced 15.7 and 13.3 µs: not the trace's cost. Not the mitigations (the same
    ///   retpolines in both; `mitigations=off` changed nothing) and little the hrtick (530 ns a
    ///   round trip with `NO_HRTICK`). Simplified: the whole block-and-switch path's extra is
    ///   the switch's, and the same factors hold on two vCPUs.
    /// - The Debian guest's own kernel threads run besides the workload (`QEMU_TCG_KTHREADS`,
    ///   `QEMU_MTTCG_KTHREADS`; `sim/kthread.rs`): kcompactd0 every 512 ms (the records'
    ///   wakeups lie 512.0 ms apart: its 500 ms rounded up by the timer wheel), a kworker per
    ///   CPU about twice a second, rcu_preempt and an unbound kworker about once (on two
    ///   vCPUs rcu_preempt about five times), each on a tick (the records' wakeups come 6-40
    ///   µs after one). Each wakeup works its stint in the records, from its switch in to
    ///   its switch out, less what schedlab's costs charge around it: under icount the
    ///   up-nice-2 records' stints one by one, 0.5-9 µs but one of 0.43 ms (7.3's per-CPU
    ///   kworker; a stint preempted at its slice's end counted whole); on two vCPUs, in host
    ///   time, the 2-vCPU records' median stint, 65-150 µs (the threads' code is cold in the
    ///   emulator's translation cache), not scaled by `host`.
    ///   Simplified: strictly periodic, at one phase each.
    pub fn qemu_tcg(n: usize, host: f64) -> Platform {
        debug_assert!(n > 1 || host == 1.0, "one vCPU runs in guest time");
        let scaled = |scale, costs: &[(&str, u64)], work: f64| {
            let table = (costs.iter())
                .map(|&(k, ns)| (k.to_string(), (ns as f64 * work).round() as u64))
                .collect();
            OpCosts::with(scale * work, &table).expect("in range")
        };
        let host_ns = |ns: Ns| (ns as f64 * host).round() as Ns;
        let host_q = |q: &[Ns]| q.iter().map(|&ns| host_ns(ns)).collect::<Vec<_>>();
        let name = if host == 1.0 {
            format!("qemu-tcg:{n}")
        } else {
            format!("qemu-tcg:{n}@{host}")
        };
        let mut p = Platform {
            name,
            description: format!("QEMU TCG with {n} vCPUs, as the oracle boots it"),
            ..Platform::smp(n)
        };
        let (scale, costs) = match n {
            1 => (QEMU_TCG_COST_SCALE, &QEMU_TCG_COSTS[..]),
            _ => (QEMU_MTTCG_COST_SCALE * host, &QEMU_MTTCG_COSTS[..]),
        };
        p.costs = scaled(scale, costs, 1.0);
        let v6_12 = scaled(scale, costs, QEMU_TCG_6_12_WORK);
        let mut v7_3 = v6_12;
        for (op, factor) in QEMU_TCG_7_3_WORK {
            v7_3.0[op as usize] = (v6_12.get(op) as f64 * factor).round() as u64;
        }
        p.kernel_costs = vec![(Kernel::V6_12, v6_12), (Kernel::V7_3, v7_3)];
        if n == 1 {
            p.work_stretch = QEMU_TCG_WORK_STRETCH.to_vec();
            p.kthreads = QEMU_TCG_KTHREADS.to_vec();
            p.kthreads_from = &QEMU_TCG_KTHREADS_FROM;
        } else {
            p.kthreads = QEMU_MTTCG_KTHREADS.to_vec();
            p.work_stretch = QEMU_MTTCG_WORK_STRETCH.to_vec();
            p.irq_jitter_ns = host_ns(QEMU_TCG_IRQ_JITTER_NS);
            p.irq_skew_ns = host_ns(QEMU_TCG_IRQ_SKEW_NS);
            p.halt_exit_ns = host_q(&QEMU_TCG_HALT_EXIT_NS);
            p.irq_entry_ns = QEMU_TCG_IRQ_ENTRY_NS.to_vec();
            p.newidle_stall_ns = host_q(&QEMU_TCG_NEWIDLE_STALL_NS);
            p.kernel_start_newidle_cost_ns = (QEMU_TCG_START_NEWIDLE_COST_NS.iter())
                .map(|(k, q)| (*k, q.to_vec()))
                .collect();
        }
        p
    }

    /// What the kernel's operations cost here under `kernel`.
    pub fn costs_for(&self, kernel: Kernel) -> OpCosts {
        *for_kernel(&self.kernel_costs, kernel, &self.costs)
    }

    /// What newly idle passes cost here under `kernel` before the workload starts.
    pub fn start_newidle_cost_for(&self, kernel: Kernel) -> &[Ns] {
        let all = &self.start_newidle_cost_ns;
        for_kernel(&self.kernel_start_newidle_cost_ns, kernel, all).as_slice()
    }

    /// Whether it has an energy model (its OPPs' power).
    pub fn has_energy_model(&self) -> bool {
        (self.freq_domains.iter()).any(|d| d.opps.iter().any(|o| o.power_mw.is_some()))
    }

    /// The largest `capacity_orig`: the reference for rt-app's `run` work.
    pub fn max_capacity(&self) -> u32 {
        self.cpus.iter().map(|c| c.capacity_orig).max().unwrap_or(0)
    }
}

/// The figure in `own` of the newest kernel up to `kernel`, else `all`'s: a kernel without a
/// measurement of its own takes its nearest older one's.
fn for_kernel<'a, T>(own: &'a [(Kernel, T)], kernel: Kernel, all: &'a T) -> &'a T {
    (own.iter())
        .filter(|(k, _)| *k <= kernel)
        .max_by_key(|(k, _)| *k)
        .map_or(all, |(_, t)| t)
}

#[cfg(test)]
mod tests;
