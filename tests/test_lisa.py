"""The text trace read by LISA (pip package lisa-linux), when it is installed: LISA's parser
for `trace-cmd report`'s human-readable text must see the same events and values as
schedlab's own DataFrames."""

from pathlib import Path

import pytest

import schedlab

lisa_trace = pytest.importorskip("lisa.trace")

WORKLOAD = Path(__file__).parent / "rtapp-corpus/observed-output/t1.json"
EVENTS = ("sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
          "sched_process_fork", "sched_process_exit", "task_rename", "cpu_idle", "cpu_frequency",
          "sched_cpu_capacity")
SIGNALS = ("sched_pelt_se", "sched_pelt_cfs", "sched_util_est_se", "sched_util_est_cfs")


@pytest.fixture(scope="module")
def traced(tmp_path_factory):
    path = tmp_path_factory.mktemp("lisa") / "trace.txt"
    result = schedlab.run(WORKLOAD, "smp:2", trace=path)
    trace = lisa_trace.Trace(str(path), parser=lisa_trace.HRTxtTraceParser.from_txt_file,
                             normalize_time=False)
    return result, trace


@pytest.mark.parametrize("event", EVENTS)
def test_lisa_sees_every_event(traced, event):
    result, trace = traced
    ours = result.events[result.events["event"] == event]
    theirs = trace.df_event(event)
    assert len(theirs) == len(ours)
    assert list(theirs.index) == pytest.approx(list(ours.index))


@pytest.mark.parametrize("signal", SIGNALS)
def test_lisa_reads_the_signal_values(traced, signal):
    result, trace = traced
    ours = result.signals[result.signals["signal"] == signal]
    theirs = trace.df_event(signal)
    assert list(theirs["util"]) == list(ours["util"])
    assert list(theirs["cpu"]) == list(ours["cpu"])
    if signal.startswith("sched_pelt"):
        assert list(theirs["update_time"]) == list(ours["update_time"])


def test_lisa_reads_switches(traced):
    result, trace = traced
    ours = result.events[result.events["event"] == "sched_switch"]
    theirs = trace.df_event("sched_switch")
    assert list(theirs["next_pid"]) == list(ours["other_pid"])
    assert list(theirs["prev_pid"]) == list(ours["pid"])
