"""LISA (lisa-linux 3.1.0, installed by `make test` as schedlab's `lisa` extra) on a schedlab
run: `RunResult.to_lisa()` gives a `lisa.trace.Trace` over the run's trace.dat and platform
description, and LISA's analyses (tasks, load_tracking, frequency, idle, rta, latency, cpus,
status) return frames whose values are schedlab's own figures."""

import json
import sys
import warnings
from pathlib import Path

import pytest

import schedlab
from idle_exits import interrupt_only_ns
from lisa_quirks import runtime_readings
from tie_order import tie_order_fixture

warnings.filterwarnings("ignore", module="lisa")

CORPUS = Path(__file__).parent / "rtapp-corpus"
SPAN_NS = 1_000_000_000


def workload() -> str:
    """video-short, rt-app's ftrace markers on (a workgen file, edited as text)."""
    text = (CORPUS / "video-short.json").read_text()
    return text.replace('"global" : {', '"global" : { "ftrace" : "main,task,loop,event",', 1)


tie_order = tie_order_fixture()


@pytest.fixture(scope="module")
def run(tmp_path_factory, tie_order):
    tmp = tmp_path_factory.mktemp("lisa")
    result = schedlab.run(workload(), "hikey960", sets=["cpufreq.governor=schedutil"], duration_ns=SPAN_NS,
                          trace=tmp / "run.dat")
    return result, result.to_lisa()


def test_lisa_sees_the_platform(run):
    result, trace = run
    assert trace.cpus_count == 8
    assert trace.plat_info["freq-domains"] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert trace.plat_info["cpu-capacities"]["orig"] == dict(zip(result.cpus["cpu"], result.cpus["capacity"]))


def test_tasks_runtime_is_schedlab_run_time(run):
    result, trace = run
    theirs = trace.ana.tasks.df_tasks_runtime()
    # LISA counts a task still running at the end up to the trace's last event: the run's
    # end is its last instant (the shutdown markers), so nothing is lost; but for the row
    # its windowing drops at the last state instant (lisa_quirks).
    for pid, readings in runtime_readings(result).items():
        got = theirs.loc[pid, "runtime"]
        assert any(got == pytest.approx(r, abs=1e-9) for r in readings), (pid, got, readings)


@pytest.mark.parametrize("cpu", [0, 4])
def test_frequency_residency_is_schedlab_residency(run, cpu):
    result, trace = run
    theirs = trace.ana.frequency.df_cpu_frequency_residency(cpu)["total_time"]
    ours = {int(khz): ns / 1e9 for khz, ns in result.cpus.loc[cpu, "freq_residency"].items() if ns}
    assert dict(theirs.items()) == pytest.approx(ours, abs=1e-9)


@pytest.mark.parametrize("cpu", [0, 4])
def test_idle_residency_is_the_time_not_busy(run, cpu):
    result, trace = run
    theirs = trace.ana.idle.df_cpu_idle_state_residency(cpu)["time"]
    # out of idle: busy, or in an interrupt (tests/idle_exits.py)
    busy = (result.cpus.loc[cpu, "busy_ns"] + interrupt_only_ns(result.events, cpu)) / 1e9
    assert theirs.loc[-1] == pytest.approx(busy, abs=1e-9)
    assert theirs.drop(-1).sum() == pytest.approx(SPAN_NS / 1e9 - busy, abs=1e-9)


def test_task_util_signals_are_schedlab_signals(run):
    result, trace = run
    theirs = trace.ana.load_tracking.df_tasks_signal("util")
    s = result.signals
    ours = s[(s["signal"] == "sched_pelt_se") & (s["path"] == "(null)")]
    # Events of one instant on several CPUs: LISA orders them by CPU, schedlab as they came.
    key = lambda df: sorted(zip((df.index * 1e9).round().astype(int), df["cpu"], df["pid"], df["util"]))
    assert key(theirs) == key(ours)


def test_cpu_util_signals_cover_every_cpu(run):
    _, trace = run
    assert sorted(trace.ana.load_tracking.df_cpus_signal("util")["cpu"].unique()) == list(range(8))


def test_rtapp_loops_are_the_markers(run):
    result, trace = run
    loops = trace.ana.rta.df_rtapp_loop()
    markers = result.events["text"].dropna()
    assert len(loops) == markers.str.startswith("rtapp_loop:").sum()
    main = trace.df_event("userspace@rtapp_main")
    assert list(main["event"]) == ["start", "clock_ref", "shutdown", "end"]


def test_wakeup_latencies_are_schedlab_latencies(run):
    result, trace = run
    task = result.tasks.set_index("comm").loc["DispSync-1"]
    theirs = trace.ana.latency.df_latency_wakeup((int(task["pid"]), "DispSync-1"))["wakeup_latency"]
    assert theirs.max() == pytest.approx(task["latency_max_ns"] / 1e9, abs=1e-9)


def test_context_switches_are_schedlab_switches(run):
    result, trace = run
    theirs = trace.ana.cpus.df_context_switches()["context_switch_cnt"]
    e = result.events
    ours = e[e["event"] == "sched_switch"].groupby("cpu").size()
    assert {cpu: theirs.get(cpu, 0) for cpu in range(8)} == {cpu: ours.get(cpu, 0) for cpu in range(8)}


def test_overutilized_time_is_schedlab_flag(run):
    result, trace = run
    theirs = trace.ana.status.df_overutilized()
    e = result.events
    flags = e[e["event"] == "sched_overutilized"]["value"]
    # The flag's value from its first report to the end, as LISA integrates it.
    changes = flags[flags != flags.shift()]
    ends = list(changes.index[1:]) + [1 + SPAN_NS / 1e9]
    on = sum(end - start for start, end, v in zip(changes.index, ends, changes) if v)
    assert theirs[theirs["overutilized"]]["len"].sum() == pytest.approx(on, abs=1e-9)


def test_a_text_trace_reads_with_its_markers_and_a_warning(tmp_path):
    from schedlab.lisa import TextTraceWarning

    args = dict(governors=["schedutil"], duration_ns=500_000_000)
    result = schedlab.run(workload(), "hikey960", trace=tmp_path / "run.txt", **args)
    with pytest.warns(TextTraceWarning, match="df_latency_preemption comes out empty"):
        trace = result.to_lisa()
    loops = trace.df_event("userspace@rtapp_loop")
    assert len(loops) == result.events["text"].dropna().str.startswith("rtapp_loop:").sum() > 0
    assert trace.ana.frequency.df_cpu_frequency_residency(0)["total_time"].sum() > 0
    # What the warning says: the preemptions the trace.dat shows are not there.
    pid = int(result.tasks.sort_values("preemptions").iloc[-1]["pid"])
    assert result.tasks.set_index("pid").loc[pid, "preemptions"] > 0
    assert trace.ana.latency.df_latency_preemption(pid).empty
    dat = schedlab.run(workload(), "hikey960", trace=tmp_path / "run.dat", **args).to_lisa()
    assert len(dat.ana.latency.df_latency_preemption(pid)) == result.tasks.set_index("pid").loc[pid, "preemptions"]


def test_to_lisa_needs_a_trace():
    result = schedlab.run(workload(), "smp:2", duration_ns=10_000_000)
    with pytest.raises(ValueError, match="wrote no trace"):
        result.to_lisa()


def test_without_lisa_to_lisa_says_how_to_install_it(tmp_path, monkeypatch):
    result = schedlab.run(workload(), "smp:2", duration_ns=10_000_000, trace=tmp_path / "run.dat")
    from schedlab.lisa import LisaMissing

    monkeypatch.setitem(sys.modules, "lisa.trace", None)  # as if LISA were not installed
    with pytest.raises(LisaMissing, match=r"pip install 'schedlab\[lisa\]'"):
        result.to_lisa()


@pytest.mark.parametrize("name", ["my board: rev #2", 'a "quoted" \\ name', "tab\there, line\nbreak",
                                  "- dash", "{not: a map}", "null", "0x10", "yes", "ünïcödé ☃", "bell\x07 del\x7f"])
def test_any_platform_name_reads_back_in_lisa(tmp_path, name):
    # plat_info.yml quotes the name as a YAML double-quoted scalar; LISA's loader (ruamel)
    # gives it back whole.
    from lisa.platforms.platinfo import PlatformInfo

    toml = (Path(__file__).parent.parent / "platforms/hikey.toml").read_text()
    board = tmp_path / "board.toml"
    board.write_text(toml.replace('name = "hikey"', f"name = {json.dumps(name)}", 1))
    schedlab.run({"tasks": {"t": {"loop": 1, "run": 1000}}}, str(board), trace=tmp_path / "run.dat", frames=False)
    assert PlatformInfo.from_yaml_map(str(tmp_path / "run.plat_info.yml"))["name"] == name


@pytest.mark.parametrize("plot, args", [("plot_task_signals", ("DispSync-1",)), ("plot_cpus_signals", ()),
                                        ("plot_task_required_capacity", ("DispSync-1",))])
def test_lisa_plots_save_as_images(run, tmp_path, plot, args):
    # LISA's load-tracking plots, saved as PNG through its matplotlib backend (they fail to
    # with matplotlib 3.11: the `lisa` extra keeps it below).
    import holoviews as hv

    _, trace = run
    path = tmp_path / f"{plot}.png"
    hv.save(getattr(trace.ana.load_tracking, plot)(*args, backend="matplotlib"), path, backend="matplotlib")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 5000


def test_a_cpu_idle_all_run_is_idle_in_lisa_too(tmp_path):
    # One task pinned to little CPU 1: CPUs 0, 2 and 3 never run anything. The trace starts
    # with each CPU's idle state, so LISA sees them idle from the start: the little domain's
    # active time is CPU 1's busy time, as schedlab counts it (LISA counted 0 s without).
    w = {"tasks": {"t": {"cpus": [1], "run": 3000, "timer": {"ref": "t", "period": 10000}}}}
    # (started at once: rt-app's main thread would run on CPU 0)
    result = schedlab.run(w, "hikey960", duration_ns=SPAN_NS // 2, trace=tmp_path / "run.dat",
                          sets=["rtapp.start_barrier=off"])
    trace = result.to_lisa()
    busy = result.cpu_rows[1]["busy_ns"] / 1e9
    assert busy > 0.1 and all(result.cpu_rows[c]["busy_ns"] == 0 for c in (0, 2, 3))
    theirs = trace.ana.frequency.df_domain_frequency_residency(1)
    assert theirs["active_time"].sum() == pytest.approx(busy, abs=1e-9)
    for cpu in (0, 2, 3):
        idle = trace.ana.idle.df_cpu_idle_state_residency(cpu)["time"]
        # Idle over LISA's whole window (the trace's first event to its last).
        assert idle.get(-1, 0.0) == 0.0 and idle.sum() == pytest.approx(trace.end - trace.start, abs=1e-9)
