"""`schedlab replay`: a trace's threads rebuilt as an rt-app workload (issue 40). A schedlab
run traced and replayed under the same conditions gives back each task's CPU time and
activations, and so does a real kernel's trace (the conformance records) replayed on the
oracle's machine; bad input gets one line naming the file."""

import gzip
import json
import shutil
from pathlib import Path

import pytest

import schedlab

# Two threads in a ping-pong through semaphores (dependencies: each waits for the other's
# post) and a periodic one (its timer's wakeups come from interrupts: a timer of its own).
WORKLOAD = {"tasks": {
    "ping": {"loop": -1, "run": 100, "sem_post": "b", "sem_wait": "a"},
    "pong": {"loop": -1, "sem_wait": "b", "run": 80, "sem_post": "a"},
    "tick": {"loop": -1, "run": 300, "timer": {"ref": "tick", "period": 4000}},
}}
DURATION_NS = 2_000_000_000


def by_name(summary: dict) -> dict:
    """The summary's tasks by rt-app task name (`ping-0` and the replay's `ping-0-1000-1`
    are both `ping`)."""
    return {t["comm"].split("-")[0]: t for t in summary["tasks"]}


@pytest.mark.parametrize("version", ["dat", "dat6"])
def test_a_replayed_run_gives_back_each_tasks_cpu_time_and_activations(cli, tmp_path, version):
    trace, rebuilt = tmp_path / "t.dat", tmp_path / "w.json"
    first = schedlab.run(WORKLOAD, platform="smp:4", duration_ns=DURATION_NS, trace=trace,
                         trace_format=version, frames=False)
    r = cli("replay", trace, "-o", rebuilt)
    assert r.returncode == 0, r.stderr
    # The platform: LISA's description that schedlab wrote beside the trace.
    info = trace.with_name("t.plat_info.yml")
    assert r.stderr.decode() == f"note: platform {info}: LISA's plat_info, smp:4 (no energy model; --platform to say)\n"
    tasks = json.loads(rebuilt.read_text())["tasks"]
    ping = tasks["ping-0-1000"]
    assert ping["loop"] == 1 and ping["policy"] == "SCHED_OTHER"
    assert any(k.startswith("sem_wait") for k in ping) and any(k.startswith("sem_post") for k in ping)
    # Its wakeups come each period after the first (the workload's 4 ms, the timer's slack
    # the same each time): one absolute timer of its own.
    timers = [v for k, v in tasks["tick-2-1002"].items() if k.startswith("timer")]
    assert len(timers) > 400 and all(t["ref"] == "unique" and t["mode"] == "absolute" for t in timers)
    assert {t["period"] for t in timers[1:]} == {4000}
    again = schedlab.run(rebuilt, platform="smp:4", duration_ns=DURATION_NS, frames=False)
    a, b = by_name(first.summary()), by_name(again.summary())
    for name in ("ping", "pong", "tick"):
        assert b[name]["run_ns"] == pytest.approx(a[name]["run_ns"], rel=0.01), name
        assert b[name]["wakeups"] == pytest.approx(a[name]["wakeups"], rel=0.02), name


def test_the_workload_goes_to_standard_output_without_o(cli, tmp_path):
    trace = tmp_path / "t.dat"
    schedlab.run(WORKLOAD, platform="smp:2", duration_ns=100_000_000, trace=trace, frames=False)
    r = cli("replay", trace, "--platform", "smp:4")
    assert r.returncode == 0
    assert set(json.loads(r.stdout)["tasks"]) == {"rt-app-1", "ping-0-1000", "pong-1-1001", "tick-2-1002"}
    assert "platform smp" not in r.stderr.decode()


@pytest.mark.parametrize("make, args, message", [
    (lambda p: p.write_text("not a trace"), [],
     "{trace}: offset 0: not a trace: neither trace.dat's magic, trace text (cpus=N) nor a Perfetto trace packet"),
    (lambda p: p.write_bytes(b"\x17\x08\x44tracing9\0"), [], "{trace}: offset 12: trace.dat version \"9\""),
    (None, ["--platform", "smp:1"], "{trace}: the trace has 2 CPUs, platform smp:1 has 1"),
    (None, ["-o", "{trace}"], "would replace the trace"),
    (None, ["--platform", "nowhere"], "nowhere"),
])
def test_bad_input_is_one_line_naming_it(cli, tmp_path, make, args, message):
    trace = tmp_path / "t.dat"
    if make is None:
        schedlab.run(WORKLOAD, platform="smp:2", duration_ns=50_000_000, trace=trace, frames=False)
    else:
        make(trace)
    before, files = trace.read_bytes(), sorted(tmp_path.iterdir())
    r = cli("replay", trace, *[a.format(trace=trace) for a in args])
    err = r.stderr.decode()
    assert r.returncode == 2
    assert message.format(trace=trace) in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert trace.read_bytes() == before and sorted(tmp_path.iterdir()) == files  # nothing written


def test_a_timers_wakeup_while_another_thread_runs_stays_a_sleep(cli, tmp_path):
    """On one CPU a periodic thread's timer fires while a hog runs: sched_waking then comes in
    the hog's context, but in a hard interrupt (`common_flags` 0x09, trace-cmd's "d.h"), so
    the periodic thread sleeps on its timer rather than waiting for the hog."""
    trace = tmp_path / "t.dat"
    workload = {"tasks": {"hog": {"loop": -1, "run": 100000},
                          "tick": {"loop": -1, "run": 300, "timer": {"ref": "tick", "period": 4000}}}}
    schedlab.run(workload, platform="smp:1", duration_ns=1_000_000_000, trace=trace, frames=False)
    r = cli("replay", trace)
    assert r.returncode == 0
    tick = json.loads(r.stdout)["tasks"]["tick-1-1001"]
    assert not any(k.startswith("sem_wait") for k in tick)
    assert sum(k.startswith("timer") for k in tick) > 200


def test_check_sets_each_threads_figures_beside_the_traces(cli, tmp_path):
    """`--check` runs the rebuilt workload under the trace's kernel (its uname: 6.1 here) and
    prints each thread's CPU time, wakeups, latencies and migrations beside the trace's."""
    trace = tmp_path / "t.dat"
    schedlab.run(WORKLOAD, platform="smp:4", kernel="6.1", duration_ns=DURATION_NS, trace=trace, frames=False)
    r = cli("replay", trace, "--check", "--platform", "smp:4")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "replay --check on smp:4, kernel 6.1" in out
    rows = {line.split("│")[1].strip(): [c.strip() for c in line.split("│")[2:-1]]
            for line in out.splitlines() if line.startswith("│")}
    for name in ("ping-0-1000", "pong-1-1001", "tick-2-1002"):
        trace_ms, replay_ms, ratio, *_, same_trace, same_replay = rows[name]
        assert float(ratio) == pytest.approx(1, abs=0.01) and float(trace_ms) > 100, rows[name]
        # Placement: the share of wakeups run on the previous CPU, both sides in 0..100.
        assert 0 <= int(same_trace) <= 100 and 0 <= int(same_replay) <= 100, rows[name]
    assert set(rows) >= {"0", "1", "2", "3"}  # the CPUs' busy time


def test_what_if_compares_the_trace_conditions_with_the_options_of_b(cli, tmp_path):
    """`--b` runs the rebuilt workload under the trace's conditions and with its options on
    top, and prints compare's tables: under powersave (every CPU at its lowest frequency)
    the same work (capacity-invariant units) takes longer."""
    trace = tmp_path / "t.dat"
    schedlab.run(WORKLOAD, platform="hikey960", duration_ns=500_000_000, trace=trace, frames=False)
    r = cli("replay", trace, "--platform", "hikey960", "--b", "--governor powersave")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "trace against --governor powersave: totals" in out
    row = next(line for line in out.splitlines() if line.startswith("│ run_ns"))
    a, b = (float(c) for c in row.split("│")[2:4])
    assert b > a
    bad = cli("replay", trace, "--b", "--nonsense")
    assert bad.returncode == 2 and "--b '--nonsense': not a run option: --nonsense" in bad.stderr.decode()


@pytest.mark.parametrize("workload, platform", [(WORKLOAD, "smp:4"), (
    {"tasks": {"hog": {"loop": -1, "run": 100000}, "tick": {"loop": -1, "run": 300, "timer": {"ref": "tick", "period": 4000}}}},
    "smp:1")])
def test_a_perfetto_trace_and_its_trace_dat_twin_give_the_same_workload(cli, tmp_path, workload, platform):
    """The same run traced as Perfetto and as trace.dat: the same threads, events and
    interrupt context (`common_flags`), so the same workload, byte for byte."""
    texts = []
    for name in ("t.perfetto-trace", "t.dat"):
        schedlab.run(workload, platform=platform, duration_ns=1_000_000_000, trace=tmp_path / name, frames=False)
        r = cli("replay", tmp_path / name)
        assert r.returncode == 0, r.stderr
        texts.append(r.stdout)
    assert texts[0] == texts[1] and len(json.loads(texts[0])["tasks"]) >= 3


def test_a_perfetto_trace_cut_short_is_refused_with_its_offset(cli, tmp_path):
    whole = tmp_path / "t.perfetto-trace"
    schedlab.run(WORKLOAD, platform="smp:2", duration_ns=50_000_000, trace=whole, frames=False)
    cut = tmp_path / "cut.perfetto-trace"
    cut.write_bytes(whole.read_bytes()[:-10])
    r = cli("replay", cut)
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.startswith(f"schedlab: {cut}: offset ") and err.strip().endswith("the file ends within a packet")


def test_the_python_face_gives_a_workload_that_run_takes(tmp_path):
    trace = tmp_path / "t.dat"
    first = schedlab.run(WORKLOAD, platform="smp:4", duration_ns=DURATION_NS, trace=trace, frames=False)
    r = schedlab.replay(trace, platform="smp:4")
    assert (r.platform, r.release, r.notes) == ("smp:4", "6.12.0-schedlab", [])
    assert r.length_ns <= DURATION_NS and len(r.cpu_busy_ns) == 4
    # The trace's own figures: ping's CPU time as the run's summary counts it (its system
    # time included, as the trace shows it).
    ping = first.summary()["tasks"][0]
    assert r.observed.loc["ping-0-1000", "run_ns"] == pytest.approx(ping["run_ns"], rel=0.001)
    again = schedlab.run(r.workload, platform=r.platform, duration_ns=r.length_ns, frames=False)
    assert by_name(again.summary())["ping"]["run_ns"] == pytest.approx(ping["run_ns"], rel=0.01)


def test_what_if_writes_compares_report(cli, tmp_path):
    trace, report = tmp_path / "t.dat", tmp_path / "c.html"
    schedlab.run(WORKLOAD, platform="smp:2", duration_ns=200_000_000, trace=trace, frames=False)
    r = cli("replay", trace, "--b", "--kernel 6.1", "--report", report)
    assert r.returncode == 0, r.stderr
    assert report.read_text().lstrip().lower().startswith("<!doctype html") and "--kernel 6.1" in report.read_text()
    alone = cli("replay", trace, "--report", report)
    assert alone.returncode == 2 and "--report is the what-if's" in alone.stderr.decode()


def test_a_text_trace_plain_or_gzipped_replays_as_its_trace_dat_does(cli, tmp_path):
    """schedlab's own `trace-cmd report` text of the round trip's run: the same figures back.
    The text has no latency columns, so the periodic thread's wakeups are told from an idle
    CPU's (its timer fires on an idle CPU at times): a timer of its own throughout."""
    text, rebuilt = tmp_path / "t.txt", tmp_path / "w.json"
    first = schedlab.run(WORKLOAD, platform="smp:4", duration_ns=DURATION_NS, trace=text, trace_format="txt",
                         frames=False)
    with open(text, "rb") as f, gzip.open(tmp_path / "t.txt.gz", "wb") as z:
        shutil.copyfileobj(f, z)
    r = cli("replay", text, "-o", rebuilt)
    assert r.returncode == 0, r.stderr
    assert "taken as woken by timers throughout" in r.stderr.decode()
    assert cli("replay", tmp_path / "t.txt.gz").stdout.decode() == rebuilt.read_text()
    tick = json.loads(rebuilt.read_text())["tasks"]["tick-2-1002"]
    assert not any(k.startswith("sem_wait") for k in tick)
    again = schedlab.run(rebuilt, platform="smp:4", duration_ns=DURATION_NS, frames=False)
    a, b = by_name(first.summary()), by_name(again.summary())
    for name in ("ping", "pong", "tick"):
        assert b[name]["run_ns"] == pytest.approx(a[name]["run_ns"], rel=0.01), name
        assert b[name]["wakeups"] == pytest.approx(a[name]["wakeups"], rel=0.02), name


CASES = Path(__file__).parent / "conformance" / "cases.toml"


@pytest.mark.parametrize("name, threads, activations", [
    ("up-periodic-3@6.12", 3, 0.02), ("up-periodic-3@6.1", 3, 0.02), ("periodic-4@6.12", 4, 0.02),
    ("periodic-4@6.1", 4, 0.02), ("periodic-6@6.1", 6, 0.02),
    # Not within the target's 2% yet (docs/replay-fidelity.md): held where they are now.
    ("pipe-1@6.12", 2, 0.06), ("pipe-2@6.12", 2, 0.08)])
def test_a_real_kernels_trace_replayed_on_its_machine_gives_back_cpu_time_and_activations(name, threads, activations):
    """The oracle's trace of the real kernel (trace-cmd report text, gzipped), rebuilt for
    and run on qemu-tcg:N under the trace's kernel: each workload thread's CPU time within 5%
    of the trace's, and its activations within 2% (issue 40's targets; the cases that meet
    them, docs/replay-fidelity.md) or, for the pipe's ping-pong, as close as they come now.
    The pipe's writer on one CPU, preempted by the reader it woke, never sleeps in the trace:
    it waits for the reply all the same."""
    from schedlab.conformance import replay, suite
    case = next(c for c in suite.cases(CASES) if c.name == name)
    row = replay.measure(case, CASES.parent / "records")
    assert row.threads == threads
    assert row.within()["cpu"], row
    assert all(abs(r - 1) <= activations for r in row.activations), row


@pytest.mark.parametrize("text, message", [
    ("# tracer: nop\n  a-1 [000] 1.000000: sched_switch: x\n",
     "no CPU count before the events (trace-cmd report's cpus=N, or tracefs's #P:N)"),
    ("cpus=1\n  a-1 [000] 1.000000: sched_switch: x\n", "line 2: sched_switch: fields not understood"),
    ("cpus=1\nhello\n", "line 2: not a trace event line"),
    ("cpus=1\n  a-1 [003] 1.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n",
     "line 2: CPU 3 in a trace of 1 CPUs"),
    ("cpus=1\n  a-1 [000] 2.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n"
     "  a-1 [000] 1.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n",
     "line 3: out of order: earlier than the line before"),
    ("cpus=1\n  a-1 [000] 1.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n",
     "the trace has no sched_switch event (record it with -e sched)"),
])
def test_bad_text_is_one_line_naming_the_line(cli, tmp_path, text, message):
    trace = tmp_path / "t.txt"
    trace.write_text(text)
    r = cli("replay", trace)
    err = r.stderr.decode()
    assert r.returncode == 2 and err == f"schedlab: {trace}: {message}\n"
    assert r.stdout == b""


def test_a_gzipped_trace_cut_short_is_refused(cli, tmp_path):
    whole = gzip.compress(b"cpus=1\n" + b"  a-1 [000] 1.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n" * 2000)
    trace = tmp_path / "t.txt.gz"
    trace.write_bytes(whole[:len(whole) // 2])
    r = cli("replay", trace)
    err = r.stderr.decode()
    assert r.returncode == 2 and err.startswith(f"schedlab: {trace}: line ")
    assert "the gzip file is cut short or damaged" in err and len(err.splitlines()) == 1


def test_a_side_file_says_what_the_trace_cannot(tmp_path):
    """`--attrs`: a table per task name or comm of rt-app's scheduling keys. The periodic
    thread (by task name) becomes a deadline task, whose policy replaces the rebuild's and
    drops its priority; the ping thread (by its comm, ping-0) gets a uclamp and an affinity."""
    trace, attrs = tmp_path / "t.dat", tmp_path / "attrs.toml"
    schedlab.run(WORKLOAD, platform="smp:4", duration_ns=200_000_000, trace=trace, frames=False)
    attrs.write_text('["tick-2-1002"]\npolicy = "SCHED_DEADLINE"\ndl-runtime = 400\ndl-period = 4000\n'
                     '["ping-0"]\nutil_min = 512\ncpus = [1]\n')
    r = schedlab.replay(trace, attrs=attrs)
    tasks = json.loads(r.workload)["tasks"]
    tick, ping = tasks["tick-2-1002"], tasks["ping-0-1000"]
    assert (tick["policy"], tick["dl-runtime"], tick["dl-period"]) == ("SCHED_DEADLINE", 400, 4000)
    assert "priority" not in tick
    assert (ping["policy"], ping["util_min"], ping["cpus"]) == ("SCHED_OTHER", 512, [1])
    assert "util_min" not in tasks["pong-1-1001"]
    s = schedlab.run(r.workload, platform=r.platform, duration_ns=r.length_ns, frames=False).summary()
    ran = {t["comm"].rsplit("-", 1)[0]: t for t in s["tasks"]}
    assert ran["tick-2-1002"]["policy"] == "SCHED_DEADLINE"
    assert ran["ping-0-1000"]["cpu"] == 1


@pytest.mark.parametrize("text, message", [
    ('["tick-2-1002"]\ndl-runtime = "x"\n', "tasks.tick-2-1002.dl-runtime: expected an integer, found a string"),
    ('["tick-2-1002"]\nfoo = 1\n', "tick-2-1002.foo: not a task's scheduling key (one of policy, priority,"),
    ("[nobody]\nutil_min = 1\n", "[nobody]: no thread of the trace has this task name (comm-pid) or comm"),
    ("x = 1\n", "x: a table of rt-app task keys, not a value"),
    ("[a\n", "attrs.toml: "),
])
def test_a_bad_side_file_is_one_line_naming_it_and_the_key(cli, tmp_path, text, message):
    trace, attrs = tmp_path / "t.dat", tmp_path / "attrs.toml"
    schedlab.run(WORKLOAD, platform="smp:2", duration_ns=50_000_000, trace=trace, frames=False)
    attrs.write_text(text)
    r = cli("replay", trace, "--attrs", attrs)
    err = r.stderr.decode()
    assert r.returncode == 2 and r.stdout == b""
    assert f"schedlab: {attrs}: " in err and message in err, err
    assert len([l for l in err.splitlines() if not l.startswith("note:")]) == 1


def test_without_platform_the_plat_info_beside_the_trace_is_the_machine(cli, tmp_path):
    """LISA's plat_info.yml beside a trace (as schedlab writes it, NAME.plat_info.yml, or
    plat_info.yml) is the platform when --platform is not given. Naming hikey960 and
    describing its CPUs, it is the built-in hikey960, energy model included; under another
    name, hikey960's capacities and frequencies without an energy model. Without one,
    smp:N."""
    trace = tmp_path / "t.dat"
    schedlab.run(WORKLOAD, platform="hikey960", duration_ns=100_000_000, trace=trace, frames=False)
    r = schedlab.replay(trace)
    info = tmp_path / "t.plat_info.yml"
    assert r.platform == str(info) and r.notes == [
        f"platform {info}: LISA's plat_info, hikey960 (its energy model and costs; --platform to say)"]
    s = schedlab.run(r.workload, platform=r.platform, duration_ns=100_000_000, frames=False).summary()
    assert [c["capacity"] for c in s["cpus"]] == [462] * 4 + [1024] * 4
    assert s["energy_mj"]["total"] > 0
    info.write_text(info.read_text().replace('"hikey960"', '"my-board"'))
    r = schedlab.replay(trace)
    assert r.notes == [f"platform {info}: LISA's plat_info, my-board (no energy model; --platform to say)"]
    s = schedlab.run(r.workload, platform=r.platform, duration_ns=100_000_000, frames=False).summary()
    assert [c["capacity"] for c in s["cpus"]] == [462] * 4 + [1024] * 4
    assert s["energy_mj"]["total"] == 0
    info.rename(tmp_path / "plat_info.yml")
    assert schedlab.replay(trace).platform == str(tmp_path / "plat_info.yml")
    (tmp_path / "plat_info.yml").unlink()
    assert schedlab.replay(trace).platform == "smp:8"


def test_what_if_with_seeds_gives_the_differences_confidence_interval(cli, tmp_path):
    """`--b ... --seeds 3`: each side runs with seeds 1..3, and compare's tables carry the
    difference's 95% confidence interval; nothing but the tables on standard output, and no
    warning on standard error."""
    trace = tmp_path / "t.dat"
    schedlab.run(WORKLOAD, platform="smp:2", duration_ns=200_000_000, trace=trace, frames=False)
    r = cli("replay", trace, "--platform", "smp:2", "--b", "--kernel 6.1", "--seeds", "3")
    assert r.returncode == 0, r.stderr
    assert "95% CI" in r.stdout.decode()
    assert r.stderr.decode() == ""
    assert cli("replay", trace, "--b", "--kernel 6.1", "--seeds", "0").returncode == 2


CORPUS = Path(__file__).parent / "rtapp-corpus"


@pytest.mark.parametrize("workload", sorted(p.name for p in (CORPUS / "tutorial").glob("*.json")) + [
    "../browser-short.json", "../mp3-short.json", "../video-short.json", "../spreading-tasks.json"])
def test_corpus_workloads_come_back_from_their_trace(tmp_path, workload):
    """Round trip on the corpus (timers, locks and condition variables, suspend/resume,
    barriers, forks, priorities): each workload run 2 s on smp:4, traced, replayed and run
    again under the same conditions gives back every thread's CPU time within 1.5% (threads
    that ran 1 ms or more) and its wakeups within 2% or 2. The 2: a rebuilt thread's start
    is rt-app's start barrier and then its delay's sleep, where the traced thread's first
    wakeup was the barrier alone; and a wait the trace saw end at the instant it began may
    not block in the run. That start sets EEVDF's lags apart from the first run's, and the
    threads' CPU time follows them through 2 s of wakeups: up to 0.9% apart in the tutorial
    workloads, 1.1-1.5% for video-short's EventThread2 (nice -8, set at its start, which
    restarts its slice) at 1.8-2.2 s."""
    trace = tmp_path / "t.dat"
    first = schedlab.run(CORPUS / "tutorial" / workload, platform="smp:4", duration_ns=DURATION_NS, trace=trace,
                         frames=False)
    r = schedlab.replay(trace, platform="smp:4")
    again = schedlab.run(r.workload, platform="smp:4", duration_ns=r.length_ns, frames=False)
    rebuilt = {t["comm"].rsplit("-", 1)[0]: t for t in again.summary()["tasks"]}
    name = {pid: task for task, pid in r.observed["pid"].items()}
    for t in first.summary()["tasks"]:
        b = rebuilt[name[t["pid"]]]
        if t["run_ns"] >= 1_000_000:
            assert b["run_ns"] == pytest.approx(t["run_ns"], rel=0.015), t["comm"]
        assert abs(b["wakeups"] - t["wakeups"]) <= max(2, 0.02 * t["wakeups"]), t["comm"]


def test_frequency_residency_is_read_from_cpu_frequency_and_checked(cli, tmp_path):
    """A schedutil run's trace: each CPU's time at each frequency, from `cpu_frequency`, is
    the run's own residency (the trace starts at its first record, within 1% of the
    length); `--check` sets it beside the replay's."""
    trace = tmp_path / "t.dat"
    video = CORPUS / "video-short.json"
    first = schedlab.run(video, platform="hikey960", governors="schedutil", duration_ns=1_000_000_000, trace=trace,
                         frames=False)
    r = schedlab.replay(trace, platform="hikey960")
    assert not any("cpu_frequency" in n for n in r.notes)
    for seen, cpu in zip(r.freq_residency_ns, first.summary()["cpus"]):
        ran = {int(k): v for k, v in cpu["freq_residency"].items()}
        for khz in set(seen) | set(ran):
            assert seen.get(khz, 0) == pytest.approx(ran.get(khz, 0), abs=0.01 * r.length_ns), (cpu["cpu"], khz)
    out = cli("replay", trace, "--platform", "hikey960", "--governor", "schedutil", "--check").stdout.decode()
    assert "frequency residency %" in out


def test_trace_cmd_report_l_of_a_trace_dat_replays_as_the_trace_dat(cli, tmp_path, trace_cmd):
    """`trace-cmd report -t -l` (the CPU and the latency columns one word, `1d.h..`) tells
    interrupt context, so its text rebuilds into the same workload as its trace.dat, byte for
    byte; plain `trace-cmd report -t` does not tell it, and a note says so."""
    import subprocess

    trace = tmp_path / "t.dat"
    schedlab.run(WORKLOAD, platform="smp:4", duration_ns=500_000_000, trace=trace, frames=False)
    for flags, same in (["-t", "-l"], True), (["-t"], False):
        text = tmp_path / "t.txt"
        report = subprocess.run([trace_cmd, "report", *flags, "-i", trace], capture_output=True, check=True)
        text.write_bytes(report.stdout)
        a = cli("replay", text, "--platform", "smp:4")
        b = cli("replay", trace, "--platform", "smp:4")
        assert a.returncode == 0, a.stderr
        assert a.stdout == b.stdout or not same
        assert ("which wakings ran in an interrupt" in a.stderr.decode()) != same
