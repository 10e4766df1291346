"""The native Perfetto trace, read back with the protobuf bindings of PyPI's `perfetto`
package: the scheduler's events as ftrace bundles, rt-app's process tree, markers as
slices, and counter tracks holding schedlab's own signal values."""

from collections import Counter
from pathlib import Path

import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

import schedlab

CORPUS = Path(__file__).parent / "rtapp-corpus"
FTRACE = {"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
          "sched_process_fork", "sched_process_exit", "task_rename", "cpu_idle", "cpu_frequency",
          "sched_pi_setprio"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    text = (CORPUS / "video-short.json").read_text()
    text = text.replace('"global" : {', '"global" : { "ftrace" : "main,task,loop,event",', 1)
    path = tmp_path_factory.mktemp("perfetto") / "run.perfetto-trace"
    result = schedlab.run(text, "hikey960", sets=["cpufreq.governor=schedutil"], duration_ns=500_000_000,
                          trace=path)
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    return result, trace


def counters(trace, double: bool = False) -> dict[str, list]:
    """Each counter track's values, by its name: a counter event's own, and its extra ones
    (`double`: the double values of the machine's counters)."""
    names = {p.track_descriptor.uuid: p.track_descriptor.name for p in trace.packet
             if p.HasField("track_descriptor") and p.track_descriptor.HasField("counter")}
    values = {}
    for p in trace.packet:
        e = p.track_event
        if p.HasField("track_event") and e.type == pb.TrackEvent.TYPE_COUNTER:
            value = e.double_counter_value if double else e.counter_value
            pairs = [(e.track_uuid, value), *zip(e.extra_counter_track_uuids, e.extra_counter_values)]
            for uuid, value in pairs:
                values.setdefault(names[uuid], []).append(value)
    return values


def test_ftrace_events_are_schedlab_events(run):
    result, trace = run
    theirs = Counter(e.WhichOneof("event") for p in trace.packet if p.HasField("ftrace_events")
                     for e in p.ftrace_events.event)
    ours = result.events["event"].astype(str).value_counts()
    assert dict(theirs) == {name: ours[name] for name in FTRACE if ours.get(name, 0)}


def test_threads_belong_to_rtapp(run):
    result, trace = run
    threads = {t.tid: (t.tgid, t.name) for p in trace.packet if p.HasField("process_tree")
               for t in p.process_tree.threads}
    # rt-app's main thread (pid 1, the process's own) and the threads it created
    assert threads == {1: (1, "rt-app")} | {pid: (1, comm[:15]) for pid, comm in
                                            zip(result.tasks["pid"], result.tasks["comm"])}


def test_counters_hold_the_signals(run):
    result, trace = run
    values = counters(trace)
    s = result.signals
    cpu0 = s[(s["signal"] == "sched_pelt_cfs") & (s["cpu"] == 0) & (s["path"] == "/")]
    assert values["CPU0 util_avg"] == list(cpu0["util"])
    assert values["CPU0 runnable_avg"] == list(cpu0["runnable"])
    task = result.tasks.iloc[1]
    se = s[(s["signal"] == "sched_pelt_se") & (s["pid"] == task["pid"])]
    assert values[f"{task['comm'][:15]}-{task['pid']} util_avg"] == list(se["util"])
    caps = result.events[(result.events["event"] == "sched_cpu_capacity") & (result.events["cpu"] == 4)]
    assert values["CPU4 capacity"] == list(caps["value"])


def test_loops_are_slices(run):
    result, trace = run
    begins = sum(p.track_event.type == pb.TrackEvent.TYPE_SLICE_BEGIN for p in trace.packet
                 if p.HasField("track_event"))
    markers = result.events["text"].dropna()
    starts = markers.str.match(r"rtapp_(loop|task): event=start").sum()
    assert begins == starts > 0


def test_energy_counters_are_the_energy_so_far(run):
    result, trace = run
    values = counters(trace, double=True)
    seen = 0
    for cpu, final in zip(result.cpus["cpu"], result.cpus["energy_mj"]):
        # Charged at each idle entry and exit (a CPU that never ran has no counter): never
        # decreasing, at most the run's total.
        energy = values.get(f"CPU{cpu} energy_mj", [])
        assert energy == sorted(energy) and (not energy or 0 < energy[-1] <= final + 1e-9)
        seen += bool(energy)
    assert seen >= 4


def test_deadline_bandwidth_counters(tmp_path):
    # One reservation of 2 ms every 10 ms on one CPU: to_ratio(10 ms, 2 ms) = (2e6 << 20) /
    # 10e6 = 209715 (BW_SHIFT 20) in running_bw while it is active; this_bw also holds 6.12's
    # fair server, to_ratio(1 s, 50 ms) = (50e6 << 20) / 1e9 = 52428 (it never runs here:
    # no fair task, the thread started at once without rt-app's main thread).
    w = {"tasks": {"dl": {"policy": "SCHED_DEADLINE", "dl-runtime": 2000, "dl-period": 10000, "loop": -1,
                          "run": 1000, "timer": {"ref": "t", "period": 10000}}}, "global": {"duration": 1}}
    path = tmp_path / "dl.perfetto-trace"
    schedlab.run(w, "smp:1", duration_ns=100_000_000, trace=path, frames=False,
                 sets=["rtapp.start_barrier=off"])
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    values = counters(trace, double=True)
    task, server = 209715 / 2**20, 52428 / 2**20
    assert set(values["CPU0 dl this_bw"]) == {server, server + task}
    assert set(values["CPU0 dl running_bw"]) == {0.0, task}


def test_uclamp_counters(tmp_path):
    # A task clamped to [256, 512] alone on a CPU: while it is runnable the runqueue's clamps
    # are its own (the max over runnable tasks); idle, the min clamp falls back to 0.
    w = {"tasks": {"t": {"util_min": 256, "util_max": 512, "loop": -1, "run": 1000,
                         "timer": {"ref": "t", "period": 4000}}}, "global": {"duration": 1}}
    path = tmp_path / "uclamp.perfetto-trace"
    schedlab.run(w, "smp:1", duration_ns=50_000_000, trace=path, frames=False)
    trace = pb.Trace()
    trace.ParseFromString(path.read_bytes())
    values = counters(trace, double=True)
    assert set(values["CPU0 uclamp_min"]) == {0.0, 256.0}
    assert 512.0 in values["CPU0 uclamp_max"]


def descriptors(trace) -> dict:
    return {p.track_descriptor.uuid: p.track_descriptor for p in trace.packet if p.HasField("track_descriptor")}


def test_the_trace_says_its_system_and_cpus(run):
    result, trace = run
    info = [p.system_info for p in trace.packet if p.HasField("system_info")]
    assert len(info) == 1 and info[0].utsname.sysname == "Linux" and info[0].num_cpus == 8
    # trace_processor reads the kernel's version from the release (else it takes 4.4's
    # task-state encoding).
    assert info[0].utsname.release == "6.12.0-schedlab"
    cpus = next(p.cpu_info for p in trace.packet if p.HasField("cpu_info")).cpus
    # platforms/hikey960.toml: the A53s (CPUs 0-3, capacity 462) and the A73s (1024).
    assert [c.capacity for c in cpus] == result.cpus["capacity"].tolist() == [462] * 4 + [1024] * 4
    assert [c.processor for c in cpus] == ["a53"] * 4 + ["a73"] * 4
    khz = {int(k) for k in result.cpu_rows[0]["freq_residency"]}
    assert set(cpus[0].frequencies) == khz and list(cpus[0].frequencies) == sorted(cpus[0].frequencies)


def test_counters_sit_under_their_cpu_or_thread_and_name_their_unit(run):
    result, trace = run
    tracks = descriptors(trace)
    counters = [d for d in tracks.values() if d.HasField("counter")]
    assert counters and all(d.counter.unit_name for d in counters)
    tids = {1, *result.tasks["pid"]}  # rt-app's main thread's signals too
    for d in counters:
        if d.name == "overutilized":
            assert not d.parent_uuid
            continue
        parent = tracks[d.parent_uuid]
        if d.name.startswith("CPU"):
            assert parent.name == d.name.split()[0] and not parent.HasField("counter")
        else:
            assert parent.HasField("thread") and parent.thread.tid in tids
            assert d.name.startswith(f"{parent.thread.thread_name}-{parent.thread.tid} ")
    units = {d.name.split(" ", 1)[1]: d.counter.unit_name for d in counters if d.name.startswith("CPU0 ")}
    assert units["util_avg"] == "of 1024 (SCHED_CAPACITY_SCALE)" and units["load_avg"] == "load (weight)"
    assert units["energy_mj"] == "mJ"


def test_no_counter_track_is_all_zeros(run):
    # A class or a bandwidth the run never used has no track (13 flat ones were written); a
    # CPU that never ran a task keeps its flat signals (every CPU has its tracks).
    result, trace = run
    unused = tuple(f"CPU{c['cpu']} " for c in result.cpu_rows if c["busy_ns"] == 0)
    names = {uuid: d.name for uuid, d in descriptors(trace).items() if d.HasField("counter")}
    values = {}
    for p in trace.packet:
        e = p.track_event
        if p.HasField("track_event") and e.type == pb.TrackEvent.TYPE_COUNTER:
            first = e.double_counter_value if e.HasField("double_counter_value") else e.counter_value
            for uuid, v in [(e.track_uuid, first), *zip(e.extra_counter_track_uuids, e.extra_counter_values)]:
                values.setdefault(names[uuid], []).append(v)
    assert set(values) == set(names.values())
    assert [name for name, vs in values.items() if not any(vs) and not name.startswith(unused)] == []
