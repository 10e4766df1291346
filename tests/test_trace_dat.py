"""trace.dat as trace-cmd reads it: `trace-cmd report -N -t` on a run's trace.dat (version 7
with zstd-compressed pages, and version 6) prints the same events with the same values as the
run's text trace, line for line on each CPU (across CPUs, trace-cmd orders events of one
instant by CPU, the text by when they happened)."""

import subprocess
from pathlib import Path

import pytest

import schedlab

CORPUS = Path(__file__).parent / "rtapp-corpus"


def markers_on(path: Path) -> str:
    """The workload's text with rt-app's ftrace markers on (corpus files are workgen JSON,
    with repeated keys: edited as text)."""
    text = path.read_text()
    return text.replace('"global" : {', '"global" : { "ftrace" : "main,task,loop,event",', 1)


EVENTS = {"sched_switch", "sched_waking", "sched_wakeup", "sched_wakeup_new", "sched_migrate_task",
          "sched_process_fork", "sched_process_exit", "task_rename", "cpu_idle", "cpu_frequency",
          "sched_cpu_capacity", "print", "sched_dl_throttle", "sched_dl_replenish", "sched_dl_miss",
          "sched_pi_setprio", "sched_overutilized", "sched_pelt_se", "sched_pelt_cfs", "sched_util_est_se", "sched_util_est_cfs",
          "sched_pelt_rt", "sched_pelt_dl"}

# trace.dat version 7 with its pages compressed (zstd), and version 6.
VERSIONS = ("dat", "dat6")

# Between them, every event schedlab records.
RUNS = {
    "video-hikey960": dict(workload=lambda: markers_on(CORPUS / "video-short.json"), platform="hikey960",
                           sets=["cpufreq.governor=schedutil"], duration_ns=1_000_000_000),
    "mp3-locks-6.1": dict(workload=lambda: CORPUS / "mp3-short.json", platform="smp:2", kernel="6.1",
                          duration_ns=500_000_000),
    # A FIFO thread blocks on a mutex a fair one holds, with priority inheritance.
    "pi": dict(workload=lambda: {"tasks": {
        "low": {"loop": -1, "lock": "m", "run": 5000, "unlock": "m", "sleep": 1000},
        "high": {"policy": "SCHED_FIFO", "priority": 10, "loop": -1, "sleep": 1500, "lock": "m", "run": 100,
                 "unlock": "m"}}, "global": {"duration": 1, "pi_enabled": True}}, platform="smp:1", duration_ns=100_000_000),
    "deadline": dict(workload=lambda: CORPUS / "external/douglas-raillard-arm-rt-app-wip-grub/deadline_reclaim-4.json",
                     platform="smp:2", duration_ns=500_000_000),
    "fork-cgroups": dict(workload=lambda: CORPUS / "tutorial/example9.json", platform="juno-r2",
                         cgroups=["/a:weight=200"], duration_ns=500_000_000),
}


def lines_by_cpu(text: str) -> dict[str, list[str]]:
    cpus = {}
    for line in text.splitlines()[1:]:
        cpus.setdefault(line[line.index("[") + 1:line.index("]")], []).append(line)
    return cpus


@pytest.fixture(scope="module")
def reports(tmp_path_factory, trace_cmd):
    """Each run's text trace, and trace-cmd's report of its trace.dat."""
    out = {}
    for name, args in RUNS.items():
        tmp = tmp_path_factory.mktemp(name)
        args = dict(args)
        workload = args.pop("workload")()
        schedlab.run(workload, trace=tmp / "t.txt", frames=False, **args)
        for version in VERSIONS:
            schedlab.run(workload, trace=tmp / f"{version}.dat", trace_format=version, frames=False, **args)
            report = subprocess.run([trace_cmd, "report", "-N", "-t", str(tmp / f"{version}.dat")],
                                    capture_output=True, text=True, check=True)
            out[name, version] = (tmp / "t.txt").read_text(), report.stdout
    return out


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("name", sorted(RUNS))
def test_trace_cmd_reports_the_text_trace(reports, name, version):
    text, report = reports[name, version]
    assert report.splitlines()[0] == text.splitlines()[0]
    ours, theirs = lines_by_cpu(text), lines_by_cpu(report)
    assert sorted(ours) == sorted(theirs)
    for cpu in ours:
        assert theirs[cpu] == ours[cpu], f"CPU {cpu}"


def test_the_runs_cover_every_event(reports):
    seen = {line.split(": ", 2)[1].strip().rstrip(":") for text, _ in reports.values()
            for line in text.splitlines()[1:]}
    assert seen == set(EVENTS)


@pytest.mark.parametrize("args, message", [
    (["--trace", "{tmp}/t.bin"], "unknown trace format"),
    (["--trace", "{tmp}/missing/t.dat"], "cannot write the trace"),
    (["--trace", "{tmp}/t.bin", "--trace-format", "pdf"], "invalid choice: 'pdf'"),
])
def test_bad_trace_outputs_are_refused(cli, tmp_path, args, message):
    workload = tmp_path / "w.json"
    workload.write_text('{"tasks": {"t": {"loop": 1, "run": 1000}}}')
    r = cli("run", workload, *[a.format(tmp=tmp_path) for a in args])
    assert r.returncode == 2
    assert message in r.stderr.decode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json"]  # nothing half-written


def test_a_trace_comes_with_its_platform_description(tmp_path):
    schedlab.run({"tasks": {"t": {"loop": 1, "run": 1000}}}, "juno-r2", trace=tmp_path / "run.dat",
                 frames=False)
    text = (tmp_path / "run.plat_info.yml").read_text()
    # platforms/juno-r2.toml: the A72s (CPUs 0-1) and the A53s (CPUs 2-5), one policy each.
    assert "cpus-count: 6" in text and "freq-domains: [[0, 1], [2, 3, 4, 5]]" in text


@pytest.mark.parametrize("period_us, state", [(10_000, 2), (4_000, 1), (3_000, 0)])
def test_cpu_idle_enters_the_state_the_next_timer_allows(tmp_path, period_us, state):
    # hikey960's A53 states: WFI, cpu-sleep (target residency 1.5 ms), cluster-sleep (3.5 ms).
    # A thread pinned to CPU 1 (an A53, capacity 462) runs 1 ms of work as the biggest CPU
    # does it, 1 ms × 1024 / 462 = 2.216 ms here, then sleeps on its timer: idle for
    # period − 2.216 ms, so 7.8 ms reaches cluster-sleep, 1.8 ms cpu-sleep, 0.8 ms only WFI.
    # Timer slack is off (the thread is RT).
    w = {"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 10, "cpus": [1], "loop": -1, "run": 1000,
                         "timer": {"ref": "t", "period": period_us}}}, "global": {"duration": 1}}
    schedlab.run(w, "hikey960", duration_ns=200_000_000, trace=tmp_path / "t.txt", frames=False)
    lines = [l for l in (tmp_path / "t.txt").read_text().splitlines() if "cpu_idle:" in l and "[001]" in l]
    states = [int(l.split("state=")[1].split()[0]) for l in lines]
    entries = [s for s in states if s != 4294967295]
    assert len(entries) > 10 and set(entries[2:]) == {state}
