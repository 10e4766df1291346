"""Seed 001: the cost of h_load with many idle cgroups. Vladimir Davydov's 1,000 processes
waking every millisecond on an 8-CPU host, with no cgroups and with 10,000 idle ones, before
(eager `update_h_load`, ≤ 3.11) and after (lazy `task_h_load`, 3.12+) his patch, through the
scheduler-cost model (`--set overhead=on`).

The machine is smp:8 at HZ=1000 under the 6.1 preset (CFS, as 3.11). The model's costs are
the platform defaults (docs/overhead.md): those of the wakeup path were calibrated on the
no-group run's 24.3% sy; the `tg_load_down` visit is a cache-latency estimate made before any
10,000-group run. The 10,000-group figures are predictions.

Every newly idle CPU balances (`fair.newidle_gate=none`): the seed says this load "triggers
'new idle' rebalance very frequently". 3.11's own gate (avg_idle of at least 0.5 ms) shuts
it in schedlab, whose CPUs idle for shorter stretches than the seed's must have: that run is
shown beside, as the reason it is not the one compared.
"""

from dataclasses import dataclass

from schedlab.reproduce import Experiment, Figure, Job, Results, register, within
from schedlab.run import RunSpec

# The seed's top and perf figures: (us %, sy %, tg_load_down % of cycles).
NO_GROUPS = (17.8, 24.3, None)
EAGER_10K = (19.1, 48.7, 24.56)
LAZY_10K = (16.9, 24.8, None)
IDLE_GROUPS = 10_000
NR_CPUS = 8
# "1000 of processes that wake up every millisecond": run 1 or 2 µs (rt-app durations are whole
# µs), half each, so that user time is near the seed's 17.8% of all CPUs.
WORKLOAD = {
    "global": {"duration": 1, "default_policy": "SCHED_OTHER"},
    "tasks": {
        "waker-1us": {"instance": 500, "loop": -1, "run": 1, "sleep": 1000},
        "waker-2us": {"instance": 500, "loop": -1, "run": 2, "sleep": 1000},
    },
}
SETS = ("overhead=on", "hz=1000")
OPEN_GATE = "fair.newidle_gate=none"
GATE_3_11 = "fair.newidle_gate=migration_cost"


@dataclass(frozen=True)
class Case:
    """One run's figures: shares of all CPU time (%) and per-second counts."""

    user: float
    sys: float
    tg_load_down_of_cycles: float
    balance: dict
    tg_load_down_per_s: float
    update_h_load_per_s: float


# The runs: (idle cgroups, fair.h_load, newidle gate), by name.
RUNS = {"base": (0, "lazy", OPEN_GATE), "eager0": (0, "eager", OPEN_GATE), "eager": (IDLE_GROUPS, "eager", OPEN_GATE),
        "lazy": (IDLE_GROUPS, "lazy", OPEN_GATE), "gated": (IDLE_GROUPS, "eager", GATE_3_11)}


def runs() -> dict[str, Job]:
    return {name: Job(RunSpec.of(WORKLOAD, f"smp:{NR_CPUS}", kernel="6.1",
                                 sets=SETS + (f"fair.h_load={h_load}", gate), idle_cgroups=groups))
            for name, (groups, h_load, gate) in RUNS.items()}


def case(r) -> Case:
    secs = r.simulated_ns / 1e9
    cpu_ns = r.simulated_ns * NR_CPUS
    sys_ns = sum(c["sys_ns"] for c in r.cpu_rows)
    user_ns = sum(t["run_ns"] - t["sys_ns"] for t in r.task_rows)
    count, charged = {}, {}
    for o in r.op_rows:
        count[o["op"]] = count.get(o["op"], 0) + o["count"]
        charged[o["op"]] = charged.get(o["op"], 0) + o["sys_ns"]
    # perf's cycles count busy time only: tg_load_down's share of user + system time.
    balance = {kind: sum(d[f"lb_count_{kind}"] for d in r.domain_rows) / secs
               for kind in ("newidle", "idle", "busy")}
    return Case(100 * user_ns / cpu_ns, 100 * sys_ns / cpu_ns, 100 * charged["tg_load_down"] / (user_ns + sys_ns),
                balance, count["tg_load_down"] / secs, count["update_h_load"] / secs)


def _detail(c: Case) -> str:
    lb = ", ".join(f"{k} {v:,.0f}" for k, v in c.balance.items())
    return (f"balance/s: {lb}; update_h_load/s {c.update_h_load_per_s:,.0f}; "
            f"tg_load_down/s {c.tg_load_down_per_s:,.0f}")


def _within(label, source, measured, expected, tol, detail, calibrated=False) -> Figure:
    return Figure(label=label, source=f"{source}%", measured=f"{measured:.1f}%", detail=detail,
                  **within(measured - expected, tol, " points", " (calibrated)" if calibrated else ""))


def judge(results: Results) -> list[Figure]:
    base, eager0, eager, lazy, gated = (case(results[name]) for name in RUNS)
    return [
        _within("no cgroups · us", NO_GROUPS[0], base.user, NO_GROUPS[0], 1, "runs of 1 and 2 µs", calibrated=True),
        _within("no cgroups · sy", NO_GROUPS[1], base.sys, NO_GROUPS[1], 1, _detail(base), calibrated=True),
        _within("no cgroups, eager · sy", NO_GROUPS[1], eager0.sys, base.sys, 2, _detail(eager0)),
        _within("10,000 idle cgroups, eager (before) · sy", EAGER_10K[1], eager.sys, EAGER_10K[1], 8, _detail(eager)),
        _within("10,000 idle cgroups, eager (before) · tg_load_down of cycles", EAGER_10K[2],
                eager.tg_load_down_of_cycles, EAGER_10K[2], 8, _detail(eager)),
        Figure(label="10,000 idle cgroups, lazy (after) · sy", source=f"{LAZY_10K[1]}%", measured=f"{lazy.sys:.1f}%",
               detail=_detail(lazy), tolerance=f"±2 points of the no-group run ({base.sys:.1f}%)",
               ok=abs(lazy.sys - base.sys) <= 2),
        Figure(label="10,000 idle cgroups, lazy (after) · tg_load_down visits", source="not in perf's top",
               measured=f"{lazy.tg_load_down_per_s:,.0f}/s", detail=_detail(lazy), tolerance="0",
               ok=lazy.tg_load_down_per_s == 0),
        Figure(label="10,000 idle cgroups, eager, 3.11's newidle gate · sy", source=f"{EAGER_10K[1]}%",
               measured=f"{gated.sys:.1f}%", detail=_detail(gated), tolerance="±8 points",
               ok=abs(gated.sys - EAGER_10K[1]) <= 8,
               explained=(f"newidle balances {gated.balance['newidle']:,.0f}/s against the open gate's "
                          f"{eager.balance['newidle']:,.0f}/s (note 2)")
               if gated.balance["newidle"] < eager.balance["newidle"] / 10 else ""),
    ]


register(Experiment(
    name="h-load",
    title="System time with 10,000 idle cgroups, eager update_h_load against lazy task_h_load",
    source="seeds/001_817b4273c39b4b42.txt, Vladimir Davydov, 13 Jul 2013",
    runs=runs,
    judge=judge,
    footnotes=(
        "smp:8, HZ=1000, the 6.1 preset; 500 tasks run 1 µs and 500 run 2 µs, each sleeping 1 ms "
        "(rt-app `sleep`, a fair task's 50 µs timer slack), for 1 s; --set overhead=on "
        "--set fair.newidle_gate=none. The balancing CPU does (and is charged) the walk of its source's groups.",
        "Every newly idle CPU balances, as the seed says this load makes it do. 3.11 balanced only when "
        "avg_idle (1/8 of each idle stretch) was at least 0.5 ms; schedlab's CPUs go idle several times "
        "a millisecond, mostly for a few µs, so the average stays below 0.5 ms, that gate stays shut and eager h_load costs little (the last "
        "row). That holds with the kernel's wakeup placement (select_task_rq_fair) too: 1,000 sleepers "
        "of 1 ms on 8 CPUs wake a CPU every 8 µs on average. The seed's machine must have idled in "
        "longer stretches, for reasons schedlab does not model.",
        "Calibrated, not predicted: the no-group us and sy. User time is sized by the run lengths; the "
        "wakeup path's costs (context switch, nanosleep, hrtimer interrupt, wakeups, migration, tick) "
        "were scaled together until the no-group run gave the seed's 24.3% sy (docs/overhead.md).",
        "Predicted: every 10,000-group figure. Nothing was tuned on them; the tg_load_down visit costs "
        "20 ns, estimated from cache latencies (docs/overhead.md). tg_load_down's share is of busy "
        "time (user + system), as perf's cycles count.",
        "The seed's lazy run reads 24.8% sy and 16.9% us where its no-group run read 24.3% and 17.8%: "
        "the machine's noise. schedlab's lazy run does exactly the no-group run's work: the lazy walk "
        "never visits an idle group.",
        "Not modelled: cache pollution. The seed's sy grows by 24.4 points where tg_load_down accounts "
        "for 16.8 (24.56% of 68.5% busy); the rest is other kernel code running slower after the "
        "walk evicted its data.",
    ),
))
