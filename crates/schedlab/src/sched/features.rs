//! Kernel behaviour as data: a preset per kernel version, overridden by `--set KEY=VALUE`
//! and `--feature NAME|NO_NAME` (kernel/sched/features.h and the sysctls).

use crate::cpufreq;
use crate::error::InputError;
use crate::history;
use crate::kernel::{History, Kernel};
use crate::sched::clock_pelt::Invariance;
use crate::sched::deadline::grub::Grub;
use crate::sched::deadline::server::ServerIdle;
use crate::sched::deadline::DlPrioChanged;
use crate::sched::fair::balance::{AvgIdle, BalanceDelayed};
use crate::sched::fair::bandwidth::Throttle;
use crate::sched::fair::protect_slice::ProtectSlice;
use crate::sched::fair::wakeup::PrevIdleBias;
use crate::sched::fair::{DelayedLag, LagLimit, Runqueue, WakeupPreempt};
use crate::sched::hrtick::HrtickArm;
use crate::sched::preempt::Preempt;
use crate::sched::uclamp::RqInc;
use crate::sched::util_est::{UtilEstForm, UtilEstSample};

/// The fair class's pick policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FairPolicy {
    /// EEVDF, Linux 6.6+ (6.12 reference).
    Eevdf,
    /// CFS, Linux ≤ 6.5 (6.1 reference).
    Cfs,
}

/// How the groups' h_load is kept (seed 001).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HLoad {
    /// 3.12+: along the path of the task asked about, cached per jiffy per cfs_rq.
    Lazy,
    /// ≤ 3.11: every group, top-down, before each balance pass (once per jiffy per CPU).
    Eager,
}

/// What lets a CPU going idle balance (`sched_balance_newidle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewidleGate {
    /// 3.13+: some CPU is overloaded, and `avg_idle` covers each domain's
    /// `max_newidle_lb_cost` plus the cost so far; `avg_idle` is capped at twice the CPU's
    /// longest pass.
    Cost,
    /// 2.6.35 to 3.12: `avg_idle` is at least `sysctl_sched_migration_cost` (a sample above
    /// twice that sets it there); then every domain.
    MigrationCost,
    /// ≤ 2.6.34: every newly idle CPU balances all its domains.
    None,
}

/// `sysctl_sched_tunable_scaling`: how the fair tunables grow with the CPU count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TunableScaling {
    None,
    Log,
    Linear,
}

/// Declares the `SCHED_FEAT` switches once: each `Feat` variant, its features.h name, and
/// its default through the modelled kernels (`SCHED_FEATS`, in the same order).
macro_rules! sched_feats {
    ($($(#[$doc:meta])* $variant:ident = $name:literal: $history:expr;)*) => {
        /// Index of a feature in [`SCHED_FEATS`].
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        #[repr(u8)]
        pub enum Feat {
            $($(#[$doc])* $variant,)*
        }

        /// The `SCHED_FEAT` switches schedlab models, in features.h order: name, and its
        /// default through the modelled kernels.
        pub const SCHED_FEATS: [(&str, History<bool>); [$($name),*].len()] =
            [$(($name, $history)),*];
    };
}

const COMMIT_TO_EEVDF: &str = "5e963f2bd465 sched/fair: Commit to EEVDF";

sched_feats! {
    GentleFairSleepers = "GENTLE_FAIR_SLEEPERS": history![true];
    StartDebit = "START_DEBIT": history![true];
    PlaceLag = "PLACE_LAG": history![false;
        V6_6 => true, "86bfbb7ce4f6 sched/fair: Add lag based placement"];
    PlaceDeadlineInitial = "PLACE_DEADLINE_INITIAL": history![false;
        V6_6 => true, "147f3efaa241 sched/fair: Implement an EEVDF-like scheduling policy"];
    PlaceRelDeadline = "PLACE_REL_DEADLINE": history![false;
        V6_12 => true, "82e9d0456e06 sched/fair: Avoid re-setting virtual deadline on 'migrations'"];
    RunToParity = "RUN_TO_PARITY": history![false;
        V6_6 => true, "63304558ba5d sched/eevdf: Curb wakeup-preemption"];
    PreemptShort = "PREEMPT_SHORT": history![false;
        V6_12 => true, "85e511df3cec sched/eevdf: Allow shorter slices to wakeup-preempt"];
    NextBuddy = "NEXT_BUDDY": history![false];
    PickBuddy = "PICK_BUDDY": history![false;
        V6_12 => true, "6.12's EEVDF completion series (features.h: PICK_BUDDY)"];
    LastBuddy = "LAST_BUDDY": history![true; V6_6 => false, COMMIT_TO_EEVDF];
    DelayDequeue = "DELAY_DEQUEUE": history![false;
        V6_12 => true, "152e11f6df29 sched/fair: Implement delayed dequeue"];
    DelayZero = "DELAY_ZERO": history![false;
        V6_12 => true, "54a58a787791 sched/fair: Implement DELAY_ZERO"];
    WakeupPreemption = "WAKEUP_PREEMPTION": history![true];
    /// A fair slice ends on an hrtimer at its deadline, not at the next tick.
    Hrtick = "HRTICK": history![false;
        V7_3 => true, "7.x features.h: HRTICK on under CONFIG_HRTIMER_REARM_DEFERRED (Debian 7.3.4 boots with it)"];
    /// A deadline task's budget ends on an hrtimer at its remaining runtime, not at the next tick.
    HrtickDl = "HRTICK_DL": history![false;
        V7_3 => true, "7.x features.h: HRTICK_DL on under CONFIG_HRTIMER_REARM_DEFERRED (Debian 7.3.4 boots with it)"];
    SisUtil = "SIS_UTIL": history![true];
    WaIdle = "WA_IDLE": history![true];
    WaWeight = "WA_WEIGHT": history![true];
    WaBias = "WA_BIAS": history![true];
    TtwuQueue = "TTWU_QUEUE": history![true];
    UtilEst = "UTIL_EST": history![true];
    /// Newly idle balancing at random, in proportion to its success rate.
    NiRandom = "NI_RANDOM": history![false;
        V6_12 => true, "sched/fair: Proportional newidle balance (6.18; in 6.12.y stable: Debian's 6.12.117 boots with it)"];
    /// NI_RANDOM's rate also grows with the time 1024 newly idle passes took.
    NiRate = "NI_RATE": history![false;
        V7_3 => true, "7.x features.h: NI_RATE (Debian 7.3.4 boots with it)"];
    AltPeriod = "ALT_PERIOD": history![true; V6_6 => false, COMMIT_TO_EEVDF];
    BaseSlice = "BASE_SLICE": history![true; V6_6 => false, COMMIT_TO_EEVDF];
    // Seed 002's RFC, never merged (the definition is `fair.prev_idle_bias`).
    WakeupBiasPrevIdle = "WAKEUP_BIAS_PREV_IDLE": history![false];
}

/// Every tunable of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    pub kernel: Kernel,
    pub fair: FairPolicy,
    pub invariance: Invariance,
    pub util_est: UtilEstForm,
    /// When util_est samples a sleeping task (`sched/util_est.rs`).
    pub util_est_sample: UtilEstSample,
    pub hz: u32,
    pub tunable_scaling: TunableScaling,
    /// Normalised (one-CPU) values, scaled at boot by [`Features::factor`].
    pub base_slice_ns: u64,
    pub latency_ns: u64,
    pub min_granularity_ns: u64,
    pub wakeup_granularity_ns: u64,
    /// Governors and their tunables.
    pub cpufreq: cpufreq::Tunables,
    /// SCHED_DEADLINE's reclaiming equation.
    pub grub: Grub,
    /// `sched_rt_period_us` and `sched_rt_runtime_us` (None: −1, unlimited): RT throttling
    /// (6.1) and the deadline class's Umax and admission limit.
    pub rt_period_us: u64,
    pub rt_runtime_us: Option<u64>,
    /// RT throttling of the root rt_rq (≤ 6.11; 6.12 has the fair server instead).
    pub rt_throttling: bool,
    /// `sched_rr_timeslice_ms`.
    pub rr_timeslice_ms: u32,
    /// `current->timer_slack_ns` of fair tasks (RT and deadline ones have none).
    pub timer_slack_ns: u64,
    /// A run's seed (0: none) and how far it may spread the threads' starts (sim/jitter.rs).
    pub seed: u64,
    pub start_spread_ns: u64,
    /// The spread of a timer interrupt's (a tick's, a sleep timer's, a scheduler timer's) entry
    /// latency
    /// (sim/jitter.rs; 0: on the expiry; None: the platform's).
    pub irq_jitter_ns: Option<u64>,
    /// A job's `run` work stretched by a draw from the platform's `work_stretch` (sim/jitter.rs).
    pub work_jitter: bool,
    /// The platform's own kernel threads run besides the workload (sim/kthread.rs).
    pub kthreads: bool,
    /// How much later (negative: earlier) their timeline runs against the workload's start.
    pub kthreads_shift_ns: i64,
    /// debugfs `fair_server/cpuN/{runtime,period}` (ns; runtime 0: no fair server, as ≤ 6.11).
    pub fair_server_runtime_ns: u64,
    pub fair_server_period_ns: u64,
    /// How idle time counts against the fair server's budget (`sched/deadline/server.rs`).
    pub server_idle: ServerIdle,
    /// How task_h_load's group factors are kept.
    pub h_load: HLoad,
    /// What lets a newly idle CPU balance.
    pub newidle_gate: NewidleGate,
    /// Where `avg_idle` takes its sample (`sched/fair/balance`).
    pub avg_idle: AvgIdle,
    /// `update_tg_load_avg` at most once per ms per cfs_rq (6.7+).
    pub tg_load_avg_ratelimit: bool,
    /// Cluster-aware wakeups: the target's cluster is scanned first, prev and recent kept
    /// only within it (6.12, not 6.1).
    pub wake_cluster: bool,
    /// What `WAKEUP_BIAS_PREV_IDLE` calls almost idle.
    pub prev_idle_bias: PrevIdleBias,
    /// How long EEVDF protects the running entity's slice (`sched/fair/protect_slice.rs`).
    pub protect_slice: ProtectSlice,
    /// How a wakeup decides to preempt (`sched/fair/eevdf.rs`).
    pub wakeup_preempt: WakeupPreempt,
    /// How a delayed entity's lag is kept (`sched/fair/eevdf.rs`).
    pub delayed_lag: DelayedLag,
    /// What bounds a lag (`sched/fair/eevdf.rs`).
    pub lag_limit: LagLimit,
    /// How CFS bandwidth throttles a group (`sched/fair/bandwidth.rs`).
    pub throttle: Throttle,
    /// Where EEVDF queues a group's tasks (`sched/fair/flat.rs`).
    pub runqueue: Runqueue,
    /// What the balancer makes of a delayed task (`sched/fair/balance`).
    pub balance_delayed: BalanceDelayed,
    /// The balancer leaves an ineligible task where it is until a pass fails
    /// (`sched/fair/balance`).
    pub balance_eligible_first: bool,
    /// A policy's `scaling_max_freq` lowers its CPUs' capacity (`sched/fair/capacity.rs`).
    pub cpufreq_pressure: bool,
    /// The preemption model (`sched/preempt.rs`).
    pub preempt: Preempt,
    /// When `schedule()` arms the hrtick (`sched/hrtick.rs`).
    pub hrtick_arm: HrtickArm,
    /// What a deadline task's change of parameters makes its CPU pull
    /// (`sched/deadline/push_pull.rs`).
    pub dl_prio_changed: DlPrioChanged,
    /// Where `enqueue_task` counts a task's clamps (`sched/uclamp.rs`).
    pub uclamp_rq_inc: RqInc,
    /// The cost model: the scheduler's work takes the CPU's time (`sim/overhead.rs`).
    pub overhead: bool,
    /// `sysctl_sched_energy_aware`: EAS where the platform allows it.
    pub energy_aware: bool,
    /// The cache-affinity model: a cold working set refills at the platform's costs
    /// (`sim/cache.rs`).
    pub cache: bool,
    /// The rt-app being modelled asks a fair task's `dl-runtime` (or a phase-less task's
    /// `runtime` event, read as the legacy key) as a custom slice: upstream rt-app since
    /// 2025, not Debian's rt-app 1.0, which sets no `sched_runtime` for fair tasks.
    pub rtapp_custom_slice: bool,
    /// rt-app's threads meet at its start barrier before their first phase (rt-app 1.0 and
    /// upstream); off: every thread starts at once, as hand derivations assume.
    pub rtapp_start_barrier: bool,
    /// How long after the run's start (a jiffy boundary) the workload begins, ns.
    pub rtapp_start_ns: u64,
    bits: u32,
}

/// One `--set` switch: its key, what it means and takes, its default through the modelled
/// kernels, and how it is read and written (`set` answers None to a value it refuses).
pub struct Switch {
    pub key: &'static str,
    pub doc: &'static str,
    pub preset: History<&'static str>,
    get: fn(&Features) -> String,
    set: fn(&mut Features, &str) -> Option<()>,
}

/// A switch that takes any value in a range, with a default through the kernels.
macro_rules! ranged {
    ($key:literal, $doc:literal, $preset:expr, $field:ident, $range:expr) => {
        Switch {
            key: $key,
            doc: $doc,
            preset: $preset,
            get: |f| f.$field.to_string(),
            set: |f, v| {
                f.$field = v.parse().ok().filter(|v| ($range).contains(v))?;
                Some(())
            },
        }
    };
}

/// A switch naming one of an enum's values, with a default through the kernels.
macro_rules! choice {
    ($key:literal, $doc:literal, $preset:expr, $field:ident, $($name:literal => $value:path),+ $(,)?) => {
        Switch {
            key: $key,
            doc: $doc,
            preset: $preset,
            get: |f| match f.$field { $($value => $name,)+ }.into(),
            set: |f, v| {
                f.$field = match v {
                    $($name => $value,)+
                    _ => return None,
                };
                Some(())
            },
        }
    };
}

/// An on | off switch with a default through the kernels.
macro_rules! on_off {
    ($key:literal, $doc:literal, $preset:expr, $field:ident) => {
        Switch {
            key: $key,
            doc: $doc,
            preset: $preset,
            get: |f| if f.$field { "on" } else { "off" }.into(),
            set: |f, v| {
                f.$field = match v {
                    "on" => true,
                    "off" => false,
                    _ => return None,
                };
                Some(())
            },
        }
    };
}

/// Every `--set` switch, in the order runs list them.
pub const SWITCHES: [Switch; 50] = [
    choice!("fair.policy", "eevdf | cfs", history!["cfs"; V6_6 => "eevdf", "147f3efaa241 sched/fair: Implement an EEVDF-like scheduling policy"], fair,
        "eevdf" => FairPolicy::Eevdf, "cfs" => FairPolicy::Cfs),
    Switch {
        key: "pelt.invariance",
        doc: "clock_pelt | legacy",
        preset: history!["clock_pelt"],
        get: |f| f.invariance.name().into(),
        set: |f, v| {
            f.invariance = Invariance::from_name(v)?;
            Some(())
        },
    },
    choice!("util_est.form", "ewma (6.8+) | enqueued_ewma (≤6.7)", history!["enqueued_ewma"; V6_12 => "ewma", "11137d384996 sched/fair: Simplify util_est (6.8)"], util_est,
        "ewma" => UtilEstForm::Ewma, "enqueued_ewma" => UtilEstForm::EnqueuedEwma),
    choice!("util_est.sample",
        "after_dequeue (≤6.11: dequeue_task_fair samples util_avg after the dequeue's PELT update) | before_dequeue (6.12 to 7.1: before it, util_avg as last updated at the wakeup, the pick or the last tick) | load_avg (7.2+: update_load_avg samples it after the PELT update of the sleep's dequeue, delayed or not); all but load_avg skip a sample above the CPU's capacity",
        history!["after_dequeue";
            V6_12 => "before_dequeue", "the delayed-dequeue series of 6.12 (util_est_update ahead of dequeue_entities in dequeue_task_fair, Debian's 6.12.117)";
            V7_3 => "load_avg", "7.x fair.c: util_est_update(se) from update_load_avg's UPDATE_UTIL_EST, without the capacity rule (read in Debian's 7.3.4; in 7.1.y stable)"],
        util_est_sample,
        "after_dequeue" => UtilEstSample::AfterDequeue, "before_dequeue" => UtilEstSample::BeforeDequeue, "load_avg" => UtilEstSample::LoadAvg),
    Switch {
        key: "hz",
        doc: "tick rate: 100 | 250 | 300 | 1000",
        preset: history!["250"],
        get: |f| f.hz.to_string(),
        set: |f, v| {
            f.hz = v
                .parse()
                .ok()
                .filter(|hz| [100, 250, 300, 1000].contains(hz))?;
            Some(())
        },
    },
    choice!("sched.tunable_scaling", "none | log | linear (sysctl_sched_tunable_scaling)", history!["log"],
        tunable_scaling,
        "none" => TunableScaling::None, "log" => TunableScaling::Log, "linear" => TunableScaling::Linear),
    choice!("fair.h_load", "lazy (3.12+: along the task's path) | eager (≤3.11: every group per balance pass)",
        history!["lazy"], h_load, "lazy" => HLoad::Lazy, "eager" => HLoad::Eager),
    choice!("fair.newidle_gate",
        "cost (3.13+: avg_idle against each domain's max_newidle_lb_cost) | migration_cost (2.6.35–3.12: avg_idle ≥ 0.5 ms) | none (≤2.6.34: always)",
        history!["cost"], newidle_gate,
        "cost" => NewidleGate::Cost, "migration_cost" => NewidleGate::MigrationCost, "none" => NewidleGate::None),
    choice!("sched.avg_idle",
        "wakeup (≤6.19: ttwu_do_activate samples the idle stretch when a task is woken onto the CPU) | idle_exit (7.0+: put_prev_task_idle samples it when the CPU stops being idle, however its task came, at the switch)",
        history!["wakeup"; V7_3 => "idle_exit", "4b603f1551a7 sched: Update rq->avg_idle when a task is moved to an idle CPU (7.0)"],
        avg_idle,
        "wakeup" => AvgIdle::Wakeup, "idle_exit" => AvgIdle::IdleExit),
    on_off!(
        "fair.wake_cluster",
        "on (6.7+: wakeups scan the target's cluster first) | off",
        history!["off"; V6_12 => "on", "8881e1639f1f sched/fair: Scan cluster before scanning LLC in wake-up path (6.7)"],
        wake_cluster
    ),
    choice!("fair.prev_idle_bias",
        "what WAKEUP_BIAS_PREV_IDLE calls almost idle (seed 002): load_avg_max (cpu_load_without <= 47) | almost_idle_load (<= 50) | load_sum (load_sum <= 10 * pelt divider) | util_avg (util_avg <= 10 * capacity: always) | util_fits_capacity (UTIL_FITS_CAPACITY)",
        history!["load_avg_max"], prev_idle_bias,
        "load_avg_max" => PrevIdleBias::LoadAvgMax, "almost_idle_load" => PrevIdleBias::AlmostIdleLoad,
        "load_sum" => PrevIdleBias::LoadSum, "util_avg" => PrevIdleBias::UtilAvg,
        "util_fits_capacity" => PrevIdleBias::UtilFitsCapacity),
    on_off!(
        "sched.energy_aware",
        "on | off (sysctl sched_energy_aware: energy-aware placement where the platform allows it)",
        history!["on"],
        energy_aware
    ),
    on_off!(
        "fair.tg_load_avg_ratelimit",
        "on (6.7+: tg->load_avg updated at most once per ms per cfs_rq) | off",
        history!["off"; V6_12 => "on", "1528c661c24b sched/fair: Ratelimit update to tg->load_avg (6.7)"],
        tg_load_avg_ratelimit
    ),
    ranged!(
        "fair.base_slice_ns",
        "EEVDF base slice, normalised (sysctl_sched_base_slice)",
        history!["750000"; V6_12 => "700000", "2ae891b82695 sched: Reduce the default slice to avoid tasks getting an extra tick (6.15; in 6.12.y stable)"],
        base_slice_ns,
        1..
    ),
    ranged!(
        "fair.latency_ns",
        "CFS sched_latency, normalised",
        history!["6000000"],
        latency_ns,
        1..
    ),
    ranged!(
        "fair.min_granularity_ns",
        "CFS min_granularity, normalised",
        history!["750000"],
        min_granularity_ns,
        1..
    ),
    ranged!(
        "fair.wakeup_granularity_ns",
        "CFS wakeup_granularity, normalised",
        history!["1000000"],
        wakeup_granularity_ns,
        1..
    ),
    choice!("fair.protect_slice",
        "deadline (6.6-6.16: the request picked) | min_slice (6.17+: vprot, bounded by the shortest queued slice) | ineligible (7.x: bounded, under PREEMPT_SHORT, by the point curr turns ineligible)",
        history!["deadline";
            V6_18 => "min_slice", "sched/fair: Limit run to parity to the min slice of enqueued entities (6.17)";
            V7_3 => "ineligible", "7.x fair.c: set_protect_slice's ineligible_vruntime, wakeup_preempt_fair's PREEMPT_WAKEUP_SHORT (read in Debian's 7.3.4)"],
        protect_slice,
        "deadline" => ProtectSlice::Deadline, "min_slice" => ProtectSlice::MinSlice, "ineligible" => ProtectSlice::Ineligible),
    choice!("fair.wakeup_preempt",
        "pick (6.6-6.18: EEVDF's pick decides, a fork's too) | rework (7.x: no preemption for a fork of no shorter slice or a delayed task; NEXT_BUDDY marks a wakee only ahead of an earlier-deadline buddy, a WF_SYNC one without preempting)",
        history!["pick";
            V7_3 => "rework", "e837456fdca8 sched/fair: Reimplement NEXT_BUDDY to align with EEVDF goals (6.19) and 7.x's wakeup_preempt_fair (read in Debian's 7.3.4)"],
        wakeup_preempt,
        "pick" => WakeupPreempt::Pick, "rework" => WakeupPreempt::Rework),
    choice!("fair.delayed_lag",
        "zero (6.6-7.0: a delayed task's lag taken when it wakes or leaves, curr's vruntime as last updated; DELAY_ZERO drops a positive one) | bounded (7.x: curr brought up to date first; the lag at the delay a floor, zero a ceiling under DELAY_ZERO; a wakeup places the task again where they moved it)",
        history!["zero";
            V7_3 => "bounded", "sched/fair: Prevent negative lag increase during delayed dequeue (Vincent Guittot, posted 2026-03-31) and enqueue_task_fair's update_curr_eevdf (read in Debian's 7.3.4)"],
        delayed_lag,
        "zero" => DelayedLag::Zero, "bounded" => DelayedLag::Bounded),
    choice!("fair.lag_limit",
        "slice (6.6-6.16: a lag clamped to twice the task's slice, at least a tick) | max_slice (6.17+: to the longest slice queued plus a tick)",
        history!["slice";
            V6_18 => "max_slice", "sched/fair: Increase max lag clamping (Peter Zijlstra, with the run-to-parity series of 6.17; entity_lag in Debian's 7.3.4)"],
        lag_limit,
        "slice" => LagLimit::Slice, "max_slice" => LagLimit::MaxSlice),
    choice!("fair.throttle",
        "cfs_rq (≤6.17: a throttled cfs_rq's group entity leaves the hierarchy, its tasks with it) | task (6.18+: the hierarchy stays; each of its tasks, once picked, is dequeued on its way to user space, and the unthrottle requeues it)",
        history!["cfs_rq";
            V6_18 => "task", "e1fad12dcb66 sched/fair: Switch to task based throttle model (6.18), with eb962f251fbb (throttle time accounting), fe8d238e646e, fcd394866e3d, 253b3f587241 and 0d4eaf8caf8c"],
        throttle,
        "cfs_rq" => Throttle::CfsRq, "task" => Throttle::Task),
    choice!("fair.runqueue",
        "hier (6.6-6.18: a cfs_rq per group, each picking among its entities, groups' too) | flat (7.x: every task in rq->cfs's tree at its hierarchical share of the CPU; the groups' cfs_rqs keep their load only)",
        history!["hier";
            V7_3 => "flat", "sched/eevdf: Move to a single runqueue (Peter Zijlstra; enqueue_hierarchy, cfs_rq->h_curr and se->h_load, read in Debian's 7.3.4)"],
        runqueue,
        "hier" => Runqueue::Hier, "flat" => Runqueue::Flat),
    choice!("fair.balance_delayed",
        "queued (≤6.13: the balancer counts a delayed task among its CPU's tasks, h_nr_queued, and may move it) | runnable (6.14+: it counts the runnable ones, h_nr_runnable, and moves a delayed task only to balance load)",
        history!["queued";
            V6_18 => "runnable", "1a49104496d3 sched/fair: Use the new cfs_rq.h_nr_runnable; 61b82dfb6b7e sched/fair: Do not try to migrate delayed dequeue task (6.14)"],
        balance_delayed,
        "queued" => BalanceDelayed::Queued, "runnable" => BalanceDelayed::Runnable),
    on_off!(
        "fair.balance_eligible_first",
        "off (≤6.13) | on (6.14+: under PLACE_LAG, a task not eligible on its cfs_rq stays where it is while the destination has tasks queued, unless a pass of the domain failed)",
        history!["off"; V6_18 => "on", "873199d27bb2 sched/core: Prioritize migrating eligible tasks in sched_balance_rq() (6.14)"],
        balance_eligible_first
    ),
    on_off!(
        "cpufreq.pressure",
        "off (≤6.9: a policy's cpufreq.scaling_max_freq limits its frequency only; its cooling device's cap, cpufreq.cooling_max_freq, and a hardware throttle, cpufreq.hw_max_freq, set its CPUs' thermal pressure, averaged for capacity_of and taken as it is by util_fits_cpu and EAS) | on (6.10+: either limit takes its share off its CPUs' capacity at once, capacity_of and get_actual_cpu_capacity; a hardware throttle sets the hw pressure, averaged everywhere)",
        history!["off"; V6_12 => "on", "75d659317bb1 cpufreq: Add a cpufreq pressure feedback for the scheduler; f1f8d0a22422 sched/cpufreq: Take cpufreq feedback into account; thermal/cpufreq: Remove arch_update_thermal_pressure() (6.10)"],
        cpufreq_pressure
    ),
    choice!("sched.preempt",
        "voluntary (Debian's to 6.18: a reschedule tells another CPU at once; a task in a system call is preempted at the call's end) | full (the same, inside the call) | lazy (6.13+: the fair class's reschedule of another CPU waits for its next interrupt or system call, and one in a system call for its end or the next tick; a full one preempts inside the call)",
        history!["voluntary";
            V7_3 => "lazy", "7c70cb94d29c sched: Add Lazy preemption model (6.13); 7.x Kconfig.preempt: PREEMPT_LAZY the default, NONE and VOLUNTARY gone where the architecture has it (Debian 7.3.4 boots full (lazy))"],
        preempt,
        "voluntary" => Preempt::Voluntary, "full" => Preempt::Full, "lazy" => Preempt::Lazy),
    choice!("sched.hrtick_arm",
        "pick (≤7.0: each schedule() cancels the hrtick and the pick starts it, its delay counted from the pick) | schedule_exit (7.1+: the pick notes the delay and the timer starts once the switch is done, so a slice runs the switch's kernel time longer; only an idle CPU cancels it)",
        history!["pick";
            V7_3 => "schedule_exit", "96d1610e0b20 sched: Optimize hrtimer handling (7.1; Debian 7.3.4: CONFIG_HRTIMER_REARM_DEFERRED)"],
        hrtick_arm,
        "pick" => HrtickArm::Pick, "schedule_exit" => HrtickArm::ScheduleExit),
    choice!("dl.prio_changed",
        "overloaded (≤6.18: a queued deadline task whose parameters change makes its CPU pull a task unless it is overloaded, its old deadline unknown) | deadline (6.19+: nothing more when its deadline stays; a pull when it got later)",
        history!["overloaded";
            V7_3 => "deadline", "sched: Move sched_class::prio_changed() into the change pattern (Peter Zijlstra, posted 2025-09-10; its get_prio_dl gives prio_changed_dl the old deadline; in Debian's 7.3.4)"],
        dl_prio_changed,
        "overloaded" => DlPrioChanged::Overloaded, "deadline" => DlPrioChanged::Deadline),
    choice!("uclamp.rq_inc",
        "after_enqueue (≤6.15: a task's clamps counted after its class's enqueue, whose frequency update misses them) | before_enqueue (6.16+: counted first, so that update sees them)",
        history!["after_enqueue";
            V6_18 => "before_enqueue", "90ca9410dab2 sched/uclamp: Align uclamp and util_est and call before freq update (6.16)"],
        uclamp_rq_inc,
        "after_enqueue" => RqInc::AfterEnqueue, "before_enqueue" => RqInc::BeforeEnqueue),
    on_off!(
        "rt.throttling",
        "on (≤6.11: the root rt_rq's bandwidth) | off (6.12+: the fair server instead)",
        history!["on"; V6_12 => "off", "5f6bd380c7bd sched/rt: Remove default bandwidth control"],
        rt_throttling
    ),
    ranged!(
        "timer.slack_ns",
        "a fair task's sleep timer slack (timer_slack_ns): 0 .. 1000000000",
        history!["50000"],
        timer_slack_ns,
        0..=1_000_000_000
    ),
    ranged!(
        "seed",
        "0: every thread starts when its workload says | N: each start later by a draw of seed N in [0, seed.start_spread_ns); any seed also draws the timer interrupts' lateness (jitter.irq_ns)",
        history!["0"],
        seed,
        0..
    ),
    ranged!(
        "seed.start_spread_ns",
        "the spread of a seeded run's thread starts: 1 .. 1000000000",
        history!["1000000"],
        start_spread_ns,
        1..=1_000_000_000
    ),
    Switch {
        key: "jitter.irq_ns",
        doc: "how late a timer interrupt (a tick, a sleep timer, a scheduler timer) may come after its expiry (its entry latency), drawn from the seed per CPU and expiry: platform (the platform's: qemu-tcg:N measured, others 0) | 0 (on the expiry) .. 1000000",
        preset: history!["platform"],
        get: |f| f.irq_jitter_ns.map_or("platform".into(), |v| v.to_string()),
        set: |f, v| {
            f.irq_jitter_ns = match v {
                "platform" => None,
                v => Some(v.parse().ok().filter(|v| *v <= crate::platform::MAX_TIMING_NS)?),
            };
            Some(())
        },
    },
    on_off!(
        "jitter.work",
        "on (each job's run work takes as much longer than rt-app's calibration as a draw of the seed from the platform's work_stretch says: qemu-tcg:N measured, others none) | off (as calibrated)",
        history!["on"],
        work_jitter
    ),
    on_off!(
        "kthreads",
        "on (the platform's own kernel threads wake on their timers and run their measured time: qemu-tcg:N's Debian guest's kcompactd0, kworkers and rcu_preempt, others none) | off (the workload's threads alone)",
        history!["on"],
        kthreads
    ),
    ranged!(
        "kthreads.shift_ns",
        "how much later (negative: earlier) the platform's kernel threads' timeline runs against the workload's start, as in a guest booted that much longer before rt-app started; their timer-wheel wakeups still fall on ticks: -1000000000 .. 1000000000",
        history!["0"],
        kthreads_shift_ns,
        -1_000_000_000..=1_000_000_000
    ),
    on_off!(
        "overhead",
        "on (the kernel's work is charged as system time at the platform's costs) | off (it is free: the idealized machine)",
        history!["on"],
        overhead
    ),
    on_off!(
        "cache",
        "on (a thread whose working set went cold stalls while the platform's caches refill) | off",
        history!["off"],
        cache
    ),
    on_off!(
        "rtapp.custom_slice",
        "off (rt-app 1.0, as Debian ships it: fair tasks keep the default slice) | on (upstream rt-app: a fair task's dl-runtime, or a phase-less task's runtime event, asks a custom slice)",
        history!["off"],
        rtapp_custom_slice
    ),
    on_off!(
        "rtapp.start_barrier",
        "on (rt-app's threads wait at its start barrier, the last to come waking the others) | off (every thread starts at once)",
        history!["on"],
        rtapp_start_barrier
    ),
    ranged!(
        "rtapp.start_ns",
        "how long after the run's start, which falls on a tick, the workload begins (rt-app's main thread, or its threads at once), as when a shell starts rt-app at any point of a jiffy: 0 .. 1000000000",
        history!["0"],
        rtapp_start_ns,
        0..=1_000_000_000
    ),
    ranged!(
        "rt.rr_timeslice_ms",
        "sched_rr_timeslice_ms: SCHED_RR slice, > 0",
        history!["100"],
        rr_timeslice_ms,
        1..
    ),
    Switch {
        key: "dl.grub",
        doc: "classic (<6.5) | pillai-2023 (seed 004) | mainline (6.5+)",
        preset: history!["classic"; V6_6 => "mainline", "6a9d623aad89 sched/deadline: Fix reclaim inaccuracy with SMP (6.5)"],
        get: |f| f.grub.name().into(),
        set: |f, v| {
            f.grub = Grub::from_name(v)?;
            Some(())
        },
    },
    Switch {
        key: "dl.fair_server_runtime_ns",
        doc: "fair server budget per CPU: 0 (none, 6.1) .. period (6.12: 50000000)",
        preset: history!["0"; V6_12 => "50000000", "a110a81c52a9 sched/fair: Add trivial fair server"],
        get: |f| f.fair_server_runtime_ns.to_string(),
        set: |f, v| {
            let v = v.parse().ok().filter(|&v| v <= f.fair_server_period_ns)?;
            f.fair_server_runtime_ns = v;
            Some(())
        },
    },
    Switch {
        key: "dl.fair_server_period_ns",
        doc: "fair server period: 100000 .. 4194304000 (1000000000)",
        preset: history!["1000000000"],
        get: |f| f.fair_server_period_ns.to_string(),
        set: |f, v| {
            let v = v.parse().ok().filter(|&v| {
                (100_000..=4_194_304_000).contains(&v) && f.fair_server_runtime_ns <= v
            })?;
            f.fair_server_period_ns = v;
            Some(())
        },
    },
    choice!("dl.server_idle",
        "clamp (6.12-6.18: idle time charged to the fair server when the idle task is put, its budget clamped at zero) | idle_wait (6.19+: charged as fair time is, and by the zero-laxity timer first; idle time that uses the budget up starts one new period, and the timer then stops the server unless fair time ran)",
        history!["clamp";
            V7_3 => "idle_wait", "e636ffb9e31b sched/deadline: Fix dl_server time accounting; f5a538c07df2 sched/deadline: Fix dl_server stop condition (6.19)"],
        server_idle,
        "clamp" => ServerIdle::Clamp, "idle_wait" => ServerIdle::IdleWait),
    Switch {
        key: "sched.rt_period_us",
        doc: "sched_rt_period_us: 1 .. 2^31-1",
        preset: history!["1000000"],
        get: |f| f.rt_period_us.to_string(),
        set: |f, v| {
            let v = v.parse().ok().filter(|&v| {
                (1..=0x7fff_ffff).contains(&v) && f.rt_runtime_us.is_none_or(|r| r <= v)
            })?;
            f.rt_period_us = v;
            Some(())
        },
    },
    Switch {
        key: "sched.rt_runtime_us",
        doc: "sched_rt_runtime_us: -1 (unlimited) | 0 .. sched_rt_period_us",
        preset: history!["950000"; V7_3 => "1000000", "7.x kernel/sched/rt.c: sysctl_sched_rt_runtime = 1000000 (Debian 7.3.4 boots with it)"],
        get: |f| f.rt_runtime_us.map_or("-1".into(), |r| r.to_string()),
        set: |f, v| {
            f.rt_runtime_us = match v.parse::<i64>().ok()? {
                -1 => None,
                v if (0..=f.rt_period_us as i64).contains(&v) => Some(v as u64),
                _ => return None,
            };
            Some(())
        },
    },
];

impl Features {
    /// 7.x's flat runqueue (`sched/fair/flat.rs`)?
    #[inline(always)]
    pub fn flat(&self) -> bool {
        self.runqueue == Runqueue::Flat
    }

    /// Is CFS bandwidth throttling task-based (6.18+; 7.x's flat runqueue builds on it)?
    pub fn task_throttle(&self) -> bool {
        self.throttle == Throttle::Task || self.flat()
    }

    /// The coherent defaults of a kernel version: every switch and feature at its value in
    /// the kernel's row.
    pub fn preset(kernel: Kernel) -> Features {
        let mut f = Features {
            kernel,
            fair: FairPolicy::Eevdf,
            invariance: Invariance::ClockPelt,
            util_est: UtilEstForm::Ewma,
            util_est_sample: UtilEstSample::BeforeDequeue,
            hz: 250,
            tunable_scaling: TunableScaling::Log,
            base_slice_ns: 0,
            latency_ns: 0,
            min_granularity_ns: 0,
            wakeup_granularity_ns: 0,
            cpufreq: cpufreq::Tunables::default(),
            grub: Grub::Mainline,
            // Wide enough that each runtime's check against its period passes in table order.
            rt_period_us: 0x7fff_ffff,
            rt_runtime_us: None,
            rt_throttling: false,
            rr_timeslice_ms: 0,
            timer_slack_ns: 0,
            seed: 0,
            start_spread_ns: 1,
            irq_jitter_ns: None,
            work_jitter: false,
            kthreads: false,
            kthreads_shift_ns: 0,
            fair_server_runtime_ns: 0,
            fair_server_period_ns: 4_194_304_000,
            server_idle: ServerIdle::Clamp,
            h_load: HLoad::Lazy,
            newidle_gate: NewidleGate::Cost,
            avg_idle: AvgIdle::Wakeup,
            tg_load_avg_ratelimit: false,
            wake_cluster: false,
            prev_idle_bias: PrevIdleBias::LoadAvgMax,
            protect_slice: ProtectSlice::Deadline,
            wakeup_preempt: WakeupPreempt::Pick,
            delayed_lag: DelayedLag::Zero,
            lag_limit: LagLimit::Slice,
            throttle: Throttle::CfsRq,
            runqueue: Runqueue::Hier,
            balance_delayed: BalanceDelayed::Queued,
            balance_eligible_first: false,
            cpufreq_pressure: false,
            preempt: Preempt::Voluntary,
            hrtick_arm: HrtickArm::Pick,
            dl_prio_changed: DlPrioChanged::Overloaded,
            uclamp_rq_inc: RqInc::AfterEnqueue,
            overhead: false,
            energy_aware: false,
            cache: false,
            rtapp_custom_slice: false,
            rtapp_start_barrier: true,
            rtapp_start_ns: 0,
            bits: 0,
        };
        for s in &SWITCHES {
            (s.set)(&mut f, s.preset.at(kernel)).expect("a preset's value is valid");
        }
        f.bits = (SCHED_FEATS.iter().enumerate())
            .filter(|(_, (_, on))| on.at(kernel))
            .fold(0, |b, (i, _)| b | 1 << i);
        f
    }

    #[inline(always)]
    pub fn has(&self, f: Feat) -> bool {
        self.bits & (1 << f as u32) != 0
    }

    /// `--feature NAME` or `--feature NO_NAME`.
    pub fn set_feature(&mut self, spec: &str) -> Result<(), InputError> {
        let (name, on) = match spec.strip_prefix("NO_") {
            Some(n) => (n, false),
            None => (spec, true),
        };
        let i = SCHED_FEATS
            .iter()
            .position(|(n, _)| *n == name)
            .ok_or_else(|| {
                InputError::option(
                    "feature",
                    format!("unknown feature {name:?}; `schedlab features` lists them"),
                )
            })?;
        if on {
            self.bits |= 1 << i;
        } else {
            self.bits &= !(1 << i);
        }
        Ok(())
    }

    /// `--set KEY=VALUE`.
    pub fn set(&mut self, spec: &str) -> Result<(), InputError> {
        let err = |m: String| InputError::option("set", m);
        let (key, value) = spec
            .split_once('=')
            .ok_or_else(|| err(format!("{spec:?} is not KEY=VALUE")))?;
        if let Some(r) = self.cpufreq.set(key, value) {
            return r.map_err(err);
        }
        let Some(s) = SWITCHES.iter().find(|s| s.key == key) else {
            let known: Vec<&str> = (SWITCHES.iter().map(|s| s.key))
                .chain(cpufreq::tunable_keys().map(|k| k.name))
                .collect();
            return Err(err(format!(
                "unknown key {key:?}; known: {}",
                known.join(", ")
            )));
        };
        (s.set)(self, value).ok_or_else(|| err(format!("{key}={value:?}: expected {}", s.doc)))
    }

    /// `get_update_sysctl_factor`: 1 + ilog2(min(ncpus, 8)) under the default LOG scaling.
    pub fn factor(&self, nr_cpus: usize) -> u64 {
        let cpus = nr_cpus.clamp(1, 8) as u64;
        match self.tunable_scaling {
            TunableScaling::None => 1,
            TunableScaling::Linear => cpus,
            TunableScaling::Log => 1 + cpus.ilog2() as u64,
        }
    }

    /// (rt_period, rt_runtime) µs, None when unlimited: what the deadline class reads.
    pub fn rt_bandwidth(&self) -> Option<(u64, u64)> {
        self.rt_runtime_us.map(|r| (self.rt_period_us, r))
    }

    /// The root rt_rq's budget per period (ns), when RT throttling is on and limits anything.
    pub fn rt_throttle(&self) -> Option<u64> {
        self.rt_runtime_us
            .filter(|&r| self.rt_throttling && r < self.rt_period_us)
            .map(|r| r * 1000)
    }

    /// Each CPU's fair server (runtime, period) ns, None when there is none.
    pub fn fair_server(&self) -> Option<(u64, u64)> {
        (self.fair_server_runtime_ns > 0)
            .then_some((self.fair_server_runtime_ns, self.fair_server_period_ns))
    }

    /// `sched_rr_timeslice` in jiffies: `msecs_to_jiffies(sysctl_sched_rr_timeslice)`.
    pub fn rr_timeslice_ticks(&self) -> u32 {
        (self.rr_timeslice_ms * self.hz).div_ceil(1000).max(1)
    }

    /// `TICK_NSEC`.
    pub fn tick_ns(&self) -> u64 {
        1_000_000_000 / self.hz as u64
    }

    /// Every switch and its value, for `schedlab features` and run headers.
    pub fn listing(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = (SWITCHES.iter())
            .map(|s| (s.key.to_string(), (s.get)(self)))
            .collect();
        out.extend(self.cpufreq.listing());
        for (i, (name, _)) in SCHED_FEATS.iter().enumerate() {
            let on = if self.bits & (1 << i) != 0 {
                "on"
            } else {
                "off"
            };
            out.push((name.to_string(), on.into()));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_follow_features_h() {
        let f = Features::preset(Kernel::V6_12);
        assert_eq!(f.fair, FairPolicy::Eevdf);
        assert!(f.has(Feat::DelayDequeue) && f.has(Feat::RunToParity) && !f.has(Feat::NextBuddy));
        let f = Features::preset(Kernel::V6_1);
        assert_eq!(f.fair, FairPolicy::Cfs);
        assert!(f.has(Feat::LastBuddy) && f.has(Feat::BaseSlice) && !f.has(Feat::DelayDequeue));
    }

    #[test]
    fn every_switch_reads_back_what_it_was_set_to() {
        for k in Kernel::ALL {
            let f = Features::preset(k);
            for s in &SWITCHES {
                assert_eq!((s.get)(&f), s.preset.at(k), "{}", s.key);
            }
        }
    }

    #[test]
    fn overrides_and_refusals() {
        let mut f = Features::preset(Kernel::V6_12);
        f.set_feature("NO_RUN_TO_PARITY").unwrap();
        assert!(!f.has(Feat::RunToParity));
        f.set("fair.policy=cfs").unwrap();
        f.set("hz=1000").unwrap();
        assert_eq!((f.fair, f.tick_ns()), (FairPolicy::Cfs, 1_000_000));
        assert!(f
            .set_feature("NO_SUCH")
            .unwrap_err()
            .to_string()
            .contains("unknown feature"));
        assert!(f
            .set("hz=123")
            .unwrap_err()
            .to_string()
            .contains("100 | 250"));
        assert!(f
            .set("nope=1")
            .unwrap_err()
            .to_string()
            .contains("unknown key"));
        assert!(f.set("hz").unwrap_err().to_string().contains("KEY=VALUE"));
    }

    #[test]
    fn log_factor() {
        let f = Features::preset(Kernel::V6_12);
        let factors: Vec<u64> = [1, 2, 3, 4, 7, 8, 144]
            .iter()
            .map(|&n| f.factor(n))
            .collect();
        assert_eq!(factors, vec![1, 2, 2, 3, 3, 4, 4]);
    }
}
