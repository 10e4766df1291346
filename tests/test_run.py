"""`schedlab run/check/platforms/features` and `schedlab.run`, end to end."""

import json
import os
from pathlib import Path

import pytest

import schedlab

CORPUS = Path(__file__).parent / "rtapp-corpus"


def write(tmp_path, text, name="w.json"):
    p = tmp_path / name
    p.write_text(text)
    return p


HOGS = '{"global": {"duration": 1}, "tasks": {"a": {"loop": 1, "run": 5000000}, "b": {"loop": 1, "run": 5000000}}}'


def test_two_hogs_share_one_cpu_through_the_python_api(tmp_path):
    r = schedlab.run(write(tmp_path, HOGS), "smp:1", sets=["rtapp.start_barrier=off"])  # the hogs alone
    assert r.simulated_ns == 1_000_000_000
    assert list(r.tasks["comm"]) == ["a-0", "b-1"]  # rt-app names threads <task>-<global index>
    assert r.tasks["utilization"].sum() == pytest.approx(1.0)
    assert r.tasks["utilization"].iloc[0] == pytest.approx(0.5, abs=0.005)
    assert r.cpus["busy_pct"].iloc[0] == pytest.approx(100.0)


def test_run_writes_trace_logs_and_summary(cli, tmp_path):
    out = cli("run", str(CORPUS / "observed-output/t1.json"), "--platform", "smp:2",
              "--trace", str(tmp_path / "trace.txt"), "--log-dir", str(tmp_path / "logs"),
              "--summary", str(tmp_path / "s.json"))
    assert out.returncode == 0, out.stderr.decode()
    trace = (tmp_path / "trace.txt").read_text()
    assert "sched_switch:" in trace and "sched_pelt_se:" in trace
    logs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert logs == ["rt-periodic-0.log", "rt-periodic-1.log", "rt-phased-2.log"]
    # rt-app's header, byte for byte (observed-output/rt-periodic-0.log)
    header = (CORPUS / "observed-output/rt-periodic-0.log").read_text().splitlines()[0]
    rows = (tmp_path / "logs/rt-periodic-0.log").read_text().splitlines()
    assert rows[0] == header and len(rows) == 1 + 5
    # run 2000 us at pLoad 50 ns: perf = 40, as rt-app logged it
    assert rows[1].split()[1] == "40"
    summary = json.loads((tmp_path / "s.json").read_text())
    assert [t["comm"] for t in summary["tasks"]] == ["periodic-0", "periodic-1", "phased-2"]
    # Staged under temporary names, yet created as open(2) creates a file: 0666 less the umask.
    umask = os.umask(0)
    os.umask(umask)
    for path in (tmp_path / "s.json", tmp_path / "trace.txt", tmp_path / "logs/rt-phased-2.log"):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path


def test_same_input_same_bytes(cli, tmp_path):
    for i in (1, 2):
        assert cli("run", str(CORPUS / "mp3-short.json"), "--platform", "hikey960", "--duration", "2s",
                   "--trace", str(tmp_path / f"t{i}.txt")).returncode == 0
    assert (tmp_path / "t1.txt").read_bytes() == (tmp_path / "t2.txt").read_bytes()


def test_check_prints_the_structure(cli):
    out = cli("check", str(CORPUS / "tutorial/example3.json"))
    assert out.returncode == 0, out.stderr.decode()
    assert "task thread0 x12" in out.stdout.decode() and "phase light 10x: run, timer:unique" in out.stdout.decode()


def test_platforms_and_features_list(cli):
    out = cli("platforms")
    assert out.returncode == 0
    for name in ("hikey", "hikey960", "juno-r2", "pixel6", "icelake-2s", "icelake-1s"):
        assert name in out.stdout.decode()
    # icelake-1s is icelake-2s with package 1 offline, renumbered: 36 cores, CPU n+36 the
    # sibling of CPU n, one LLC (MC) over all 72.
    out = cli("platforms", "icelake-1s", "--domains").stdout.decode()
    assert "cpu0/domain0: name=SMT level=0 span=0,36 " in out and "cpu35/domain0: name=SMT level=0 span=35,71 " in out
    assert "cpu0/domain1: name=MC level=2 span=0-71 " in out and "domain2" not in out
    out = cli("features")
    assert out.returncode == 0 and "RUN_TO_PARITY" in out.stdout.decode() and "fair.policy" in out.stdout.decode()


@pytest.mark.parametrize("args, text, message", [
    (["--platform", "nope"], HOGS, "unknown platform"),
    (["--set", "hz=7"], HOGS, "--set: hz"),
    (["--feature", "NO_SUCH"], HOGS, "unknown feature"),
    ([], '{"tasks": {"t": {"phases": {"p": {"run": "abc"}}}}}', "tasks.t.phases.p.run"),
    ([], '{"tasks": {"t": {"run": 1,,}}}', "line 1, column"),
    ([], '{"global": {"duration": 1}, "tasks": {"t": {"sleep": -4, "run": 1}}}', "must not be negative"),
    (["--platform", "smp:2"], '{"global": {"duration": 1}, "tasks": {"t": {"cpus": [3], "run": 1}}}', "outside the platform"),
])
def test_bad_input_is_one_message_and_status_2(cli, tmp_path, args, text, message):
    out = cli("run", str(write(tmp_path, text)), *args, "--trace", str(tmp_path / "t.txt"))
    assert out.returncode == 2
    assert message in out.stderr.decode() and "Traceback" not in out.stderr.decode()
    assert not (tmp_path / "t.txt").exists(), "no output for refused input"


@pytest.mark.parametrize("duration", [[], ["--duration", "10s"]])
def test_deadlock_is_reported_when_certain_with_the_trace_written(cli, tmp_path, duration):
    # Barrier b is used twice, by t alone: it waits for a second arrival that never comes,
    # after running 10 µs on smp:1's only OPP (capacity 1024): certain at 10 µs, with or
    # without a longer run asked for (the kernel's work free: --set overhead=off).
    text = '{"tasks": {"t": {"loop": 1, "phases": {"a": {"run": 10, "barrier": "b"}, "z": {"barrier": "b"}}}}}'
    out = cli("run", str(write(tmp_path, text)), "--platform", "smp:1", "--set", "overhead=off",
              "--trace", str(tmp_path / "t.txt"), *duration)
    assert out.returncode == 2
    assert "deadlock at 0.000010 s: t-0 (barrier b) can never proceed" in out.stderr.decode()
    assert "sched_switch:" in (tmp_path / "t.txt").read_text()


def test_events_and_signals_frames_match_the_text_trace(tmp_path):
    trace = tmp_path / "trace.txt"
    r = schedlab.run(CORPUS / "observed-output/t1.json", "smp:2", trace=trace)
    lines = [ln for ln in trace.read_text().splitlines() if not ln.startswith(("#", "cpus="))]
    events = [ln.split(": ", 2)[1].split(":")[0].strip() for ln in lines]
    ev, sig = r.events, r.signals
    assert len(ev) + len(sig) == len(lines)
    assert list(ev["event"].astype(str)) == [e for e in events if not e.startswith(("sched_pelt", "sched_util_est"))]
    assert list(sig["signal"].astype(str)) == [e for e in events if e.startswith(("sched_pelt", "sched_util_est"))]
    # The same instants: the trace's timestamps are the frames' time index.
    stamps = [float(ln.split(": ", 1)[0].split()[-1]) for ln in lines]
    assert sorted(stamps) == pytest.approx(sorted(list(ev.index) + list(sig.index)))
    switches = ev[ev["event"] == "sched_switch"]
    assert set(switches["prev_state"]) <= {"R", "S", "X"} and switches["other_pid"].notna().all()
    # A cfs_rq row has no pid; a task row has no util_est fields in a PELT row.
    cfs = sig[sig["signal"] == "sched_pelt_cfs"]
    assert cfs["pid"].isna().all() and cfs["util"].notna().all() and cfs["enqueued"].isna().all()
    se = sig[sig["signal"] == "sched_util_est_se"]
    assert set(se["comm"]) <= {*r.tasks["comm"], "rt-app"} and se["ewma"].notna().all()


def test_frames_can_be_left_out(tmp_path):
    r = schedlab.run(write(tmp_path, HOGS), "smp:1", frames=False)
    assert r.events is None and r.signals is None


def test_unsimulated_settings_are_warned_about(tmp_path):
    wl = ('{"global": {"duration": 1}, "tasks": {"rt": {"policy": "SCHED_FIFO", "priority": 10, "loop": 1, '
          '"phases": {"p0": {"run": 1000}, "p1": {"policy": "SCHED_OTHER", "run": 1000}}}, '
          '"capped": {"util_max": 512, "taskgroup": "/bg", "loop": 1, "run": 1000}}}')
    r = schedlab.run(write(tmp_path, wl), "smp:2")
    assert not any("SCHED_FIFO" in w for w in r.warnings), r.warnings  # the RT class is simulated
    assert any(w.startswith("tasks.rt.phases.p1: a phase's policy") for w in r.warnings), r.warnings
    assert list(r.tasks["policy"]) == ["SCHED_FIFO", "SCHED_OTHER"]
    assert not any("util_max" in w for w in r.warnings), r.warnings  # uclamp is simulated
    # A task's group is simulated: made up with the defaults, as rt-app makes it, with a note.
    assert any(w.startswith("cgroup /bg: created") for w in r.warnings), r.warnings


def test_energy_model_costs_as_em_compute_costs():
    em = schedlab.energy_model("hikey").set_index("khz")
    # performance = 1024 · 432/1200 = 368 (floored); cost = 10 · 124000 µW / 368 = 3369.
    assert (em.loc[432000, "performance"], em.loc[432000, "cost"]) == (368, 3369)
    # 208 MHz: 10 · 69000 / 177 = 3898, not below 432 MHz's 3369: inefficient.
    assert em.loc[208000, "cost"] == 3898 and em.loc[208000, "inefficient"]
    assert not em.loc[432000, "inefficient"] and em.loc[1200000, "cluster_power_mw"] == 112
    assert schedlab.energy_model("smp:2").empty  # no power figures, no table


def _cpu0_freqs(tmp_path, task, after_s, sets=()):
    """The frequencies schedutil sets on hikey's CPU 0 after `after_s` seconds, the task
    started at once (without rt-app's main thread, whose own util would ask its frequency)."""
    wl = write(tmp_path, json.dumps({"global": {"duration": 2}, "tasks": {"t": {"cpus": [0], "loop": -1, **task}}}))
    r = schedlab.run(wl, "hikey", sets=["cpufreq.governor=schedutil", "rtapp.start_barrier=off", *sets])
    f = r.events[(r.events.event == "cpu_frequency") & (r.events.cpu == 0)]
    return set(f[f.index > r.events.index.min() + after_s].value), r


def test_uclamp_min_raises_and_uclamp_max_caps_schedutil(tmp_path):
    # 5 ms of work every 100 ms: a small util whose 1.25 margin stays under 1.2 GHz; with
    # util_min 1024 the running CPU's request is max(1.25·util, 1024) = 1024 → 1.2 GHz.
    small = {"run": 5000, "sleep": 95000}
    assert max(_cpu0_freqs(tmp_path, small, 0.01)[0]) < 1_200_000
    assert 1_200_000 in _cpu0_freqs(tmp_path, {**small, "util_min": 1024}, 0.01)[0]


@pytest.mark.parametrize("rq_inc, freqs", [("after_enqueue", [960_000, 432_000]),
                                           ("before_enqueue", [432_000])])
def test_where_the_enqueue_counts_uclamp_decides_its_first_frequency(tmp_path, rq_inc, freqs):
    """Always running with util_max 300, booted at 1.2 GHz. Its enqueue's frequency update
    asks for its util, 512 for a new task, with the margin: 640 → 750 MHz → 960 MHz, unless
    the clamp is counted first (6.16+), when it asks min(640, 300) = 300 → 1.2 GHz·300/1024 =
    351.6 MHz → 432 MHz. From the first tick on it is 432 MHz either way, never held higher
    (uclamp_rq_is_capped). The trace starts with the enqueue's frequency (boot's changes at its
    instant are one state)."""
    task = {"run": 100000, "sleep": 0, "util_max": 300}
    _, r = _cpu0_freqs(tmp_path, task, 0, [f"uclamp.rq_inc={rq_inc}"])
    f = r.events[(r.events.event == "cpu_frequency") & (r.events.cpu == 0)]
    assert f.value.tolist() == freqs and r.policies.residency[0]["432000"] > 1.99e9
    assert not r.warnings


def test_util_min_above_util_max_is_refused(cli, tmp_path):
    wl = write(tmp_path, '{"tasks": {"t": {"run": 10, "util_min": 600, "util_max": 300}}}')
    r = cli("run", str(wl))
    assert r.returncode == 2 and b"tasks.t.util_min: util_min 600 is above util_max 300" in r.stderr


def test_a_workload_given_as_a_dict_or_json_text_runs_as_its_file(tmp_path):
    spec = json.loads(HOGS)
    by_file = schedlab.run(write(tmp_path, HOGS), "smp:2", frames=False).summary()
    assert by_file.pop("workload")["name"].endswith("w.json")
    for given, name in ((spec, "<dict>"), (HOGS, "<string>")):
        other = schedlab.run(given, "smp:2", frames=False).summary()
        # The summary names the workload as it was given; the run is the same.
        assert other.pop("workload")["name"] == name
        assert json.dumps(other, default=int) == json.dumps(by_file, default=int)


@pytest.mark.parametrize("given, origin", [('{"tasks": {"t": {"run": "abc"}}}', "<string>"),
                                           ({"tasks": {"t": {"run": "abc"}}}, "<dict>")])
def test_errors_in_a_dict_or_json_text_name_it_as_a_file_would_be(tmp_path, given, origin):
    path = write(tmp_path, '{"tasks": {"t": {"run": "abc"}}}')
    with pytest.raises(schedlab.InputError) as from_file:
        schedlab.run(path)
    with pytest.raises(schedlab.InputError) as from_text:
        schedlab.run(given)
    assert str(from_text.value) == str(from_file.value).replace(str(path), origin)
    assert str(from_text.value).startswith(f"{origin}: tasks.t.run")


def test_a_run_spec_pickles_and_runs_the_same_elsewhere(tmp_path):
    import pickle

    spec = schedlab.RunSpec.of({"global": {"duration": 1}, "tasks": {"a": {"loop": -1, "run": 3000, "sleep": 7000}}},
                               "hikey960", kernel="6.1", governors=["schedutil"], duration_ns=500_000_000)
    again = pickle.loads(pickle.dumps(spec))
    assert again == spec and again.switches() == ["cpufreq.governor=schedutil"]
    a, b = spec.run(frames=False).summary(), again.run(frames=False).summary()
    assert a == b and a["simulated_s"] == 0.5 and a["policies"][0]["governor"] == "schedutil"


def test_an_exception_in_progress_stops_the_run_and_leaves_no_trace(tmp_path):
    calls = []

    def progress(now, total):
        calls.append(now)
        if now >= 300_000_000:
            raise KeyboardInterrupt

    trace = tmp_path / "t.txt"
    wl = {"global": {"duration": 100}, "tasks": {"a": {"loop": -1, "run": 3000, "sleep": 7000}}}
    with pytest.raises(KeyboardInterrupt):
        schedlab.run(wl, "smp:2", trace=trace, log_dir=tmp_path / "logs", progress=progress)
    # Reported every 100 ms of simulated time: stopped at the first report past 300 ms.
    assert len(calls) == 4 and calls[-1] < 400_000_000
    assert not trace.exists() and not (tmp_path / "logs").exists()


@pytest.mark.parametrize("signame, status, said", [("SIGINT", 130, b"interrupted"), ("SIGTERM", 143, b"terminated")])
def test_ctrl_c_or_sigterm_stops_the_cli_and_leaves_no_output(tmp_path, signame, status, said):
    import signal
    import subprocess
    import sys
    import time

    trace = tmp_path / "t.txt"
    p = subprocess.Popen([sys.executable, "-m", "schedlab", "run", str(CORPUS / "mp3-long.json"), "--platform",
                          "hikey960", "--duration", "100000s", "--trace", str(trace), "--summary",
                          str(tmp_path / "s.json"), "--log-dir", str(tmp_path / "logs")],
                         stderr=subprocess.PIPE, stdout=subprocess.PIPE)
    deadline = time.monotonic() + 60
    # The run has started once its outputs exist under their temporary names.
    while len(list(tmp_path.glob(".*.tmp"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not trace.exists(), "the trace is in place only when the run is over"
    time.sleep(0.5)
    p.send_signal(getattr(signal, signame))
    out, err = p.communicate(timeout=60)
    assert p.returncode == status, err.decode()
    assert said in err and b"Traceback" not in err
    assert list(tmp_path.iterdir()) == [], "no output and no temporary file is left"


def test_platforms_domains_prints_each_cpus_sched_domains(cli):
    out = cli("platforms", "hikey960", "--domains")
    assert out.returncode == 0, out.stderr.decode()
    lines = out.stdout.decode().splitlines()
    assert len(lines) == 16  # 8 CPUs x (MC, PKG)
    assert lines[0].startswith("cpu0/domain0: name=MC level=2 span=0-3 groups={0},{1},{2},{3}")
    assert lines[9].startswith("cpu4/domain1: name=PKG level=3 span=0-7 groups={4-7},{0-3}")
    assert lines[9].endswith("SD_ASYM_CPUCAPACITY SD_ASYM_CPUCAPACITY_FULL SD_PREFER_SIBLING")
    missing = cli("platforms", "--domains")
    assert missing.returncode == 2 and b"name a platform" in missing.stderr


def test_the_api_takes_durations_with_units_and_one_string_or_none_for_lists():
    w = {"tasks": {"t": {"run": 1000, "sleep": 1000}}}
    by_ns = schedlab.run(w, "smp:2", duration_ns=20_000_000, governors=["schedutil"], frames=False)
    by_unit = schedlab.run(w, "smp:2", duration_ns="20ms", governors="schedutil", cgroups=None, sets=None,
                           features=None, frames=False)
    assert by_unit.simulated_ns == by_ns.simulated_ns == 20_000_000
    assert by_unit.summary()["tasks"] == by_ns.summary()["tasks"]
    assert by_unit.policy_rows[0]["governor"] == "schedutil"
    # One cgroup given as a string is one cgroup, not one per character.
    r = schedlab.run({"tasks": {"t": {"run": 1000, "sleep": 1000, "taskgroup": "/a"}}}, "smp:2",
                     duration_ns="10ms", cgroups="/a:max=5000/10000", frames=False)
    assert [g["path"] for g in r.group_rows] == ["/a"] and not r.warnings


@pytest.mark.parametrize("kwargs, message", [
    ({"duration_ns": "2 parsecs"}, "duration_ns: '2 parsecs' is not a duration"),
    ({"governors": 3}, "governors: 3 is not a string or a list of strings"),
    ({"sets": ["hz=1000", 5]}, "sets: 5 is not a string"),
])
def test_bad_api_arguments_name_the_argument(kwargs, message):
    with pytest.raises(schedlab.InputError, match=message):
        schedlab.run({"tasks": {"t": {"run": 1000}}}, "smp:2", **kwargs)


def test_the_core_reads_json_as_rt_app_does():
    # json-c's leniencies (inline and line comments, trailing commas, single quotes), and a
    # repeated key's last value: what grub's experiment reads its examples with.
    text = """{"a": 1, /* inline */ "b": [1, 2.5,], // to the line's end
              "c": 'single', "a": 3, "d": {"e": null, "f": true,},}"""
    assert schedlab._core.read_json(text, "t.json") == {"a": 3, "b": [1, 2.5], "c": "single",
                                                       "d": {"e": None, "f": True}}
    with pytest.raises(schedlab.InputError, match=r"t.json:1:\d+: "):
        schedlab._core.read_json('{"a": }', "t.json")


def test_a_condition_waits_unlock_wakes_the_mutex_waiter_after_the_sleep(tmp_path):
    # a holds m and waits on c; b (FIFO) wakes meanwhile, preempts a and blocks on m, so a's
    # unlock hands m to b and wakes it; b signals. On one CPU no task's wakeup and switch in
    # share an instant: the unlock's wakeup is delivered after a's sleep, 1 ns later, as the
    # futex wake and the futex wait are two calls.
    w = {"global": {"duration": 1}, "tasks": {
        "a": {"loop": 20, "lock": "m", "run": 1000, "wait": {"ref": "c", "mutex": "m"}, "unlock": "m"},
        "b": {"policy": "SCHED_FIFO", "priority": 10, "loop": 20, "delay": 100, "lock": "m", "run": 500,
              "signal": "c", "unlock": "m", "sleep": 2000}}}
    # (a and b alone: started at once, without rt-app's main thread, which pthread_join wakes)
    r = schedlab.run(w, "smp:1", trace=tmp_path / "t.txt", sets=["rtapp.start_barrier=off"])
    ev = r.events[r.events.event.isin(["sched_wakeup", "sched_switch"])]
    woken = set(zip(ev[ev.event == "sched_wakeup"].pid, ev[ev.event == "sched_wakeup"].ts))
    switched_in = set(zip(ev[ev.event == "sched_switch"].other_pid, ev[ev.event == "sched_switch"].ts))
    assert len(woken) >= 20 and not woken & switched_in
    assert not r.deadlock and all(t["run_ns"] > 0 for t in r.task_rows)
