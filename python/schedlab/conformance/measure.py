"""What a conformance record keeps of one run, measured the same way from the kernel's trace and
schedlab's: per-thread CPU time, migrations, wakeups and their placement and latency, CPU busy
time, the first sched_switch events, /proc/schedstat deltas and the cgroups' cpu.stat."""

import re

import numpy as np

from .ftrace import Event

SWITCHES = 1000
IDLE = "<idle>"


def workload_threads(evs: list[Event], tasks: list[str]) -> dict[int, str]:
    """pid -> `task-k` for the threads of the trace's last rt-app process, k counting each
    task's threads in fork order. rt-app 1.0 names every instance of a task as the task (15
    characters of it), schedlab `task-index`: both are read."""
    name = re.compile(r"^(?P<task>.*?)(?:-\d+)?$")
    short = {t[:15]: t for t in tasks}
    forks = {e.fields["child_pid"]: (i, e.fields["pid"]) for i, e in enumerate(evs)
             if e.name == "sched_process_fork"}
    found = {}
    for e in evs:
        if e.name == "task_rename" and e.fields["pid"] in forks:
            comm = e.fields["newcomm"]
            task = short.get(comm) or short.get(name.match(comm)["task"])
            if task is not None:
                found[e.fields["pid"]] = (task, *forks[e.fields["pid"]])
    if not found:
        return {}
    parent = max(found.values(), key=lambda f: f[1])[2]  # the last rt-app's
    threads, count = {}, {}
    for pid, (task, _, _) in sorted(((p, f) for p, f in found.items() if f[2] == parent),
                                    key=lambda pf: pf[1][1]):
        threads[int(pid)] = f"{task}-{count.setdefault(task, 0)}"
        count[task] += 1
    return threads


def first_fork(evs: list[Event]) -> int | None:
    """When (ns) the trace's last rt-app process creates its first thread (the kernel's rt-app
    was exec'd by a shell, `task_rename`; schedlab's main thread is pid 1, its creation shown
    as its own fork)."""
    main = [e.fields["pid"] for e in evs if e.name == "task_rename" and e.fields["newcomm"] == "rt-app"]
    main = main[-1] if main else "1"
    forks = [e.ts for e in evs if e.name == "sched_process_fork" and e.fields["pid"] == main
             and e.fields["child_pid"] != main]
    return forks[0] if forks else None


def _percentiles(values: list[int]) -> list[float]:
    """p50, p90, p99 in µs (nearest rank)."""
    if not values:
        return [0.0, 0.0, 0.0]
    v = sorted(values)
    return [v[min(len(v) - 1, (len(v) * p + 99) // 100 - 1)] / 1e3 for p in (50, 90, 99)]


def measure(evs: list[Event], tasks: list[str], duration_s: float, cpus: int) -> dict:
    """A run's metrics over the workload's window: from the first thread's fork for duration_s."""
    threads = workload_threads(evs, tasks)
    forks = [e.ts for e in evs if e.name == "sched_process_fork"
             and int(e.fields["child_pid"]) in threads]
    if not forks:
        raise ValueError("no workload thread in the trace")
    t0 = min(forks)
    t1 = t0 + int(duration_s * 1e9)
    window = (t1 - t0) / 1e9
    running: dict[int, tuple[int, int]] = {}  # cpu -> (pid, since)
    cpu_ns = {pid: 0 for pid in threads}
    busy = [0] * cpus
    last_cpu: dict[int, int] = {}
    waking: dict[int, int] = {}
    stats = {pid: {"migrations": 0, "wakeups": 0, "wake_prev": 0, "lat": []} for pid in threads}
    switches = []
    shown: dict[int, str] = {}  # cpu -> the workload thread (or idle) it last switched to
    all_busy = None
    for e in evs:
        if e.ts > t1:
            break
        f = e.fields
        if e.name == "sched_switch":
            prev, nxt = int(f["prev_pid"]), int(f["next_pid"])
            start = max(running.get(e.cpu, (0, t0))[1], t0)
            if e.ts > t0:
                if prev in cpu_ns:
                    cpu_ns[prev] += e.ts - start
                if prev != 0:
                    busy[e.cpu] += e.ts - start
            running[e.cpu] = (nxt, e.ts)
            last_cpu[prev] = e.cpu
            if nxt in waking:
                w = waking.pop(nxt)
                if w >= t0:
                    stats[nxt]["lat"].append(e.ts - w)
            if e.ts >= t0 and len(switches) < SWITCHES and (nxt == 0 or nxt in threads):
                # The workload's switches: other tasks (the guest's kernel threads, the shell
                # that reads the counters) are transparent, a -> kworker -> b counts as a -> b.
                name = _name(nxt, f["next_comm"], threads)
                if shown.get(e.cpu, IDLE) != name:
                    switches.append([round((e.ts - t0) / 1e3, 3), shown.get(e.cpu, IDLE), name])
                shown[e.cpu] = name
            if all_busy is None and len(running) == cpus and \
                    all(p in threads for p, _ in running.values()):
                all_busy = (e.ts - t0) / 1e6
        elif e.ts < t0:
            continue
        elif e.name == "sched_waking" and int(f["pid"]) in threads:
            waking[int(f["pid"])] = e.ts
        elif e.name == "sched_wakeup" and int(f["pid"]) in threads:
            pid = int(f["pid"])
            stats[pid]["wakeups"] += 1
            stats[pid]["wake_prev"] += int(f["target_cpu"]) == last_cpu.get(pid)
        elif e.name == "sched_migrate_task" and int(f["pid"]) in threads:
            stats[int(f["pid"])]["migrations"] += 1
    for cpu, (pid, since) in running.items():  # the stretches still running at the end
        start = max(since, t0)
        if pid in cpu_ns:
            cpu_ns[pid] += t1 - start
        if pid != 0:
            busy[cpu] += t1 - start
    marks = {e.fields["text"]: (e.ts - t0) / 1e9 for e in evs
             if e.name == "print" and e.fields["text"].startswith("schedstat ")}
    return {
        "window_s": window,
        "snapshots_s": [marks["schedstat before"], marks["schedstat after"]] if marks else None,
        "threads": {threads[pid]: {
            "share": cpu_ns[pid] / 1e9 / window,
            "migrations_per_s": s["migrations"] / window,
            "wakeups_per_s": s["wakeups"] / window,
            "wake_prev": s["wake_prev"] / s["wakeups"] if s["wakeups"] else None,
            "latency_us": _percentiles(s["lat"]),
        } for pid, s in sorted(stats.items(), key=lambda kv: threads[kv[0]])},
        "busy": [b / 1e9 / window for b in busy],
        "all_cpus_busy_ms": all_busy,
        "switches": switches,
    }


BENCH_COMMS = ("sched-pipe", "sched-messaging", "hackbench-")


def bench(evs: list[Event], ops: int, ops_per_s: float) -> dict:
    """A perf bench run: its rate (the tool's report) and, per operation (a pipe round trip, a
    message), how often its tasks were switched in, woken and migrated, and their wakeup
    latencies (µs, p50, p90, p99). The tasks: those renamed as perf names itself
    (`sched-pipe`, `sched-messaging`) or as schedlab names their threads (`sched-pipe-N`,
    `hackbench-gG-rR`/`-sS`), and the children they fork."""
    workers = set()
    for e in evs:
        f = e.fields
        if e.name == "task_rename" and f["newcomm"].startswith(BENCH_COMMS):
            workers.add(int(f["pid"]))
        elif e.name == "sched_process_fork" and int(f["pid"]) in workers:
            workers.add(int(f["child_pid"]))
    counts = {"sched_switch": 0, "sched_wakeup": 0, "sched_migrate_task": 0}
    waking: dict[int, int] = {}
    lat = []
    for e in evs:
        pid = int(e.fields["next_pid"] if e.name == "sched_switch" else e.fields.get("pid", -1))
        if pid not in workers:
            continue
        if e.name in counts:
            counts[e.name] += 1
        if e.name == "sched_waking":
            waking[pid] = e.ts
        elif e.name == "sched_switch" and pid in waking:
            lat.append(e.ts - waking.pop(pid))
    if not workers:
        raise ValueError("no perf bench task in the trace")
    return {"ops_per_s": ops_per_s, "latency_us": _percentiles(lat),
            "per_op": {"switches in": counts["sched_switch"] / ops,
                       "wakeups": counts["sched_wakeup"] / ops,
                       "migrations": counts["sched_migrate_task"] / ops}}


def _name(pid: int, comm: str, threads: dict[int, str]) -> str:
    if pid == 0:
        return IDLE
    return threads.get(pid, comm)


def schedstat(text: str) -> dict:
    """/proc/schedstat's counters: per CPU and per domain (versions 15 to 17; 17 names each
    domain before its cpumask)."""
    out = {"version": None, "cpus": [], "domains": []}
    for line in text.splitlines():
        words = line.split()
        if words and words[0] == "version":
            out["version"] = int(words[1])
        elif words and words[0].startswith("cpu"):
            out["cpus"].append([int(w) for w in words[1:]])
        elif words and words[0].startswith("domain"):
            out["domains"].append([int(w) for w in words[3 if out["version"] >= 17 else 2:]])
    return out


# Column names of /proc/schedstat (Documentation/scheduler/sched-stats.rst, versions 15-17).
CPU_FIELDS = ["yld_count", "legacy", "sched_count", "sched_goidle", "ttwu_count", "ttwu_local",
              "rq_cpu_time", "run_delay", "pcount"]
_LB_HEAD = ["lb_count", "lb_balanced", "lb_failed"]
_LB_TAIL = ["lb_gained", "lb_hot_gained", "lb_nobusyq", "lb_nobusyg"]
# Version 17 splits lb_imbalance in four.
LB = {15: _LB_HEAD + ["lb_imbalance"] + _LB_TAIL, 16: _LB_HEAD + ["lb_imbalance"] + _LB_TAIL,
      17: _LB_HEAD + ["lb_imbalance_load", "lb_imbalance_util", "lb_imbalance_task",
                      "lb_imbalance_misfit"] + _LB_TAIL}
# Version 16 (6.12) orders the idle types as enum cpu_idle_type now does: busy first.
IDLE_TYPES = {15: ("idle", "busy", "newidle"), 16: ("busy", "idle", "newidle"),
              17: ("busy", "idle", "newidle")}
DOMAIN_TAIL = ["alb_count", "alb_failed", "alb_pushed", "sbe_count", "sbe_balanced",
                    "sbe_pushed", "sbf_count", "sbf_balanced", "sbf_pushed", "ttwu_wake_remote",
                    "ttwu_move_affine", "ttwu_move_balance"]


def domain_fields(version: int) -> list[str]:
    return [f"{k}.{idle}" for idle in IDLE_TYPES[version] for k in LB[version]] + DOMAIN_TAIL


def schedstat_delta(before: str, after: str, window_s: float) -> dict:
    """Per-second rates of the counters, summed over CPUs and over domains."""
    a, b = schedstat(after), schedstat(before)
    names = CPU_FIELDS + domain_fields(a["version"])
    cpu = [sum(col) for col in zip(*([x - y for x, y in zip(r, s)] for r, s in zip(a["cpus"], b["cpus"])))]
    dom = [sum(col) for col in zip(*([x - y for x, y in zip(r, s)]
                                     for r, s in zip(a["domains"], b["domains"])))]
    return {k: v / window_s for k, v in zip(names, cpu + dom) if k != "legacy"}


def cyclictest(report: str) -> dict:
    """A cyclictest run, from its report's histogram (`-q -h US`, cyclictest.c's print_hist):
    each thread's latency p50, p90 and p99 (nearest rank over its periods, an overflow counting
    as the histogram's size) and its average (`# Avg Latencies`), in µs."""
    lines = report.splitlines()
    if "# Histogram" not in lines:
        raise ValueError(f"cyclictest printed no histogram: {report.strip()[-200:]!r}")
    rows = [[int(w) for w in line.split()]
            for line in lines[lines.index("# Histogram") + 1:] if line[:1].isdigit()]
    labelled = {line.split(":")[0][2:]: [int(w) for w in line.split(":")[1].split()]
                for line in lines if line.startswith("# ") and ":" in line}
    overflows, avgs = labelled["Histogram Overflows"], labelled["Avg Latencies"]
    threads = []
    for i, avg in enumerate(avgs):
        ns = [us * 1000 for us, row in enumerate(rows) for _ in range(row[1 + i])]
        ns += [len(rows) * 1000] * overflows[i]
        threads.append({"latency_us": _percentiles(ns), "avg_us": avg})
    return {"cyclictest": threads}


# The multiply-adds of `schbench -C -m 1 -t 1` with its defaults' work (-n 5, -F 256: 104³
# each), which the oracle's calibration run times.
SCHBENCH_CALIBRATION_MACS = 5 * 104 ** 3


def _schbench_percentiles(text: str) -> dict[str, int]:
    """A schbench histogram's percentile lines (`show_latencies`): µs by percentile, "50.0"."""
    return {p: int(v) for p, v in re.findall(r"^\t(?:\* |  )(\d+\.\d)th: (\d+)", text, re.M)}


def schbench(report: str) -> dict:
    """A schbench run, from its last report (schbench.c's `show_latencies`): the wakeup and
    request latencies' p50, p90 and p99 (µs, as its histogram gives them) and the average
    RPS; a pipe test's (`-p`), its wakeup latencies and its transfers a second."""
    block = report[report.rfind("Wakeup Latencies percentiles"):]
    rate = re.search(r"^(?:average rps: |avg worker transfer: )([0-9.]+)", block, re.M)
    if not block or rate is None:
        raise ValueError(f"schbench printed no last report: {report.strip()[-200:]!r}")
    pipe = rate[0].startswith("avg worker transfer")
    figures = {}
    for label, key in (("Wakeup Latencies", "wakeup_us"), ("Request Latencies", "request_us"))[:1 + (not pipe)]:
        values = _schbench_percentiles(block[block.index(label):].split("min=")[0])
        figures[key] = [values[p] for p in ("50.0", "90.0", "99.0")]
    return {"schbench": {**figures, ("transfers" if pipe else "rps"): float(rate[1])}}


# The 64-byte lines a loop of `schbench -p 1048576` writes, two memsets of 1 MiB, beyond
# those of `-p 1`'s (the oracle's two calibration runs).
SCHBENCH_PIPE_LINES = 2 * (1 << 20) // 64


def schbench_memset_ps(big: str, small: str) -> float:
    """A memset line's time (ps) at the guest's speed: `schbench -p 1048576 -m 1 -t 1` against
    `-p 1`, both on one CPU: their loops' time apart over the lines the larger one writes."""
    ops = [schbench(report)["schbench"]["transfers"] for report in (big, small)]
    return (1 / ops[0] - 1 / ops[1]) * 1e12 / SCHBENCH_PIPE_LINES


# The probabilities of the request latencies a schbench report gives (min, its percentiles,
# max), and how many quantiles a work stretch is drawn from (platform.rs's most).
SCHBENCH_REQUEST_CDF = (0, 0.5, 0.9, 0.99, 0.999, 1)
STRETCH_QUANTILES = 100


def schbench_work_stretch(one: str, every: str) -> list[int]:
    """How much longer than one worker's median request (`schbench -C -m 1 -t 1`, `one`) a
    request's work takes with a worker per CPU (`schbench -C -m 1 -t N`, `every`): its
    quantiles at (k + 1/2)/100, in 1/1000, read off the report's min, p50, p90, p99, p99.9
    and max, linear between them (simplified: the report's buckets stand for the
    distribution)."""
    block = every[every.rfind("Request Latencies percentiles"):].split("RPS percentiles")[0]
    pct = _schbench_percentiles(block)
    lo_hi = re.search(r"min=(\d+), max=(\d+)", block)
    if lo_hi is None or not {"50.0", "90.0", "99.0", "99.9"} <= pct.keys():
        raise ValueError(f"schbench printed no request latencies: {every.strip()[-200:]!r}")
    points = [int(lo_hi[1]), *(pct[p] for p in ("50.0", "90.0", "99.0", "99.9")), int(lo_hi[2])]
    median = schbench(one)["schbench"]["request_us"][0]
    probabilities = (np.arange(STRETCH_QUANTILES) + 0.5) / STRETCH_QUANTILES
    stretch = np.interp(probabilities, SCHBENCH_REQUEST_CDF, points) * 1000 / median
    return sorted(min(max(round(q), 500), 4000) for q in stretch)


def schbench_matrix_ps(calibration: str) -> float:
    """A multiply-add's time (ps) at the guest's speed: `schbench -C`'s request latency p50
    (its work loop alone) over the multiply-adds it does."""
    return schbench(calibration)["schbench"]["request_us"][0] * 1e6 / SCHBENCH_CALIBRATION_MACS
