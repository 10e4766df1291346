"""The oracle's refusals, which need no QEMU: one line, exit status 2, no record written."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
RECORDS = ROOT / "tests" / "conformance" / "records"


def oracle(*args, env=None):
    return subprocess.run([sys.executable, str(ROOT / "oracle" / "oracle.py"), *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_an_unknown_case_is_one_line_and_status_2():
    before = sorted(RECORDS.iterdir())
    r = oracle("record", "no-such-case")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "oracle: unknown case 'no-such-case' (see: oracle.py list)\n"
    assert sorted(RECORDS.iterdir()) == before


def test_missing_host_packages_are_named_with_the_command_that_installs_them(tmp_path):
    # No QEMU, mmdebstrap, cpio, dpkg or apt on an empty PATH: the message names the packages.
    env = dict(os.environ, PATH=str(tmp_path))
    r = oracle("setup", env=env)
    assert r.returncode == 2
    assert r.stderr == ("oracle: missing host packages: apt-get install apt cpio dpkg mmdebstrap "
                        "qemu-system-x86\n")


def test_an_unknown_kernel_is_refused(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "oracle"))
    import image
    from errors import OracleError
    with pytest.raises(OracleError, match=r"^unknown kernel '6.6': the oracle boots 6.1, 6.12, 7.3$"):
        image.kernel_suite("6.6")


def test_the_list_names_every_case_with_its_state():
    r = oracle("list")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) >= 25 and all(line.split()[1] in ("recorded", "-") for line in lines)


@pytest.fixture
def guest(monkeypatch, tmp_path):
    """oracle.py's main with the host check, the image and QEMU replaced: `run` stands for
    qemu-system-x86_64 and `records` for tests/conformance/records."""
    monkeypatch.syspath_prepend(str(ROOT / "oracle"))
    import boot
    import image
    import oracle as oracle_py
    monkeypatch.setenv("SCHEDLAB_ORACLE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(image, "check_host", lambda: None)
    monkeypatch.setattr(image, "kernel_suite", lambda k: "bookworm")
    piece = tmp_path / "piece"
    piece.write_bytes(b"")
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "modules.cpio").write_bytes(b"")
    monkeypatch.setattr(image, "userspace", lambda: piece)
    monkeypatch.setattr(image, "kernel", lambda v: tmp_path / "k")
    records = tmp_path / "records"
    monkeypatch.setattr(oracle_py, "RECORDS", records)
    return oracle_py, boot, records


def test_a_workload_the_guests_rtapp_refuses_is_one_line_and_no_record(guest, monkeypatch, capsys):
    oracle_py, boot, records = guest
    # What the guest brought back when rt-app 1.0 was given SCHED_IDLE (its own words).
    files = {"status": b"rt-app=2\n", "guest.txt": b"uname=6.1.0-50-amd64\n",
             "rt-app.log": b"[rt-app] <crit> [json]         Invalid policy SCHED_IDLE\n"}
    monkeypatch.setattr(boot, "boot_retrying", lambda *a: files)
    assert oracle_py.main(["record", "hogs-2@6.1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("oracle: ") and err.endswith(
        "hogs-2.json: rt-app failed in the guest (rt-app=2): "
        "[rt-app] <crit> [json]         Invalid policy SCHED_IDLE\n")
    assert not records.exists()


def test_a_guest_that_times_out_is_booted_again_then_one_line_and_no_record(guest, monkeypatch, capsys):
    oracle_py, boot, records = guest
    runs = []

    def qemu(cmd, **kw):  # QEMU runs out of time
        runs.append(cmd[0])
        raise subprocess.TimeoutExpired(cmd, kw["timeout"])
    monkeypatch.setattr(boot.subprocess, "run", qemu)
    monkeypatch.setattr(boot.image, "pack", lambda root, out: out.write_bytes(b""))
    assert oracle_py.main(["record", "hogs-2@6.1"]) == 2
    out, err = capsys.readouterr()
    # hogs-2's 3 s workload: a limit of 3 + 120 s for the job, 120 s more for QEMU.
    assert runs == ["qemu-system-x86_64"] * boot.BOOTS
    assert out.count("booting again") == boot.BOOTS - 1
    assert err == "oracle: the guest did not finish within 243 s\n"
    assert not records.exists()


def test_try_needs_one_kernels_case_and_feature_names():
    r = oracle("try", "pipe-1")
    assert (r.returncode, r.stderr) == (2, "oracle: try: name one kernel's case, e.g. pipe-1@7.3\n")
    r = oracle("try", "pipe-1@7.3", "--feature", "NO_HRTICK; reboot")
    assert r.returncode == 2
    assert r.stderr == ("oracle: try: --feature 'NO_HRTICK; reboot': a sched feature's name, "
                        "e.g. NO_HRTICK\n")


def test_try_sets_the_features_and_runs_its_command_first_on_the_kernel_line_asked(guest, monkeypatch, capsys):
    oracle_py, boot, _ = guest
    asked = []

    def boot_retrying(kernel, vcpus, files, limit, append=""):
        asked.append((kernel, files["run.sh"].decode().splitlines()[0], append))
        raise oracle_py.OracleError("stop here")
    monkeypatch.setattr(boot, "boot_retrying", boot_retrying)
    args = ["try", "pipe-1@7.3", "--append", "mitigations=off", "--feature", "NO_HRTICK",
            "--before", "perf bench sched pipe -l 100"]
    assert oracle_py.main(args) == 2
    assert asked == [("7.3", "{ echo NO_HRTICK > /sys/kernel/debug/sched/features; perf bench "
                             "sched pipe -l 100; } > before.log 2>&1", "mitigations=off")]


def test_7_3_boots_with_damons_statistics_off(guest, monkeypatch, capsys):
    oracle_py, boot, _ = guest
    lines = []

    def qemu(cmd, **kw):
        lines.append(cmd[cmd.index("-append") + 1])
        raise subprocess.TimeoutExpired(cmd, kw["timeout"])
    monkeypatch.setattr(boot.subprocess, "run", qemu)
    monkeypatch.setattr(boot.image, "pack", lambda root, out: out.write_bytes(b""))
    assert oracle_py.main(["try", "pipe-1@7.3", "--append", "mitigations=off"]) == 2
    assert lines[0].endswith("oracle.limit=600 damon_stat.enabled=N mitigations=off")
    lines.clear()
    assert oracle_py.main(["try", "pipe-1@6.12"]) == 2
    assert lines[0].endswith("oracle.limit=600")


def test_a_case_that_fails_leaves_the_others_to_be_recorded(guest, monkeypatch, capsys):
    oracle_py, boot, records = guest
    recorded = []
    files = {"status": b"rt-app=2\n", "guest.txt": b"uname=6.1.0-50-amd64\n",
             "rt-app.log": b"[rt-app] <crit> [json]         Invalid policy SCHED_IDLE\n"}

    def one(case):
        recorded.append(case.name)
        if case.name == "hogs-2@6.1":
            monkeypatch.setattr(boot, "boot_retrying", lambda *a: files)
            oracle_py.one_run(case)
    monkeypatch.setattr(oracle_py, "record", one)
    assert oracle_py.main(["record", "hogs-2@6.1", "hogs-3@6.1"]) == 2
    err = capsys.readouterr().err
    assert recorded == ["hogs-2@6.1", "hogs-3@6.1"]
    assert err.count("\n") == 1 and "rt-app failed in the guest (rt-app=2)" in err


def test_the_eevdf_reader_finds_v_as_the_kernel_divides(monkeypatch):
    # Two events of schbench-1@7.3 traced with `try --probe eevdf` (7.3.4, 2026-11-28). At the
    # switch, next (155) is curr, outside the sums; prev (156), queued, is all they hold: sW
    # one nice-0 weight (1048576, sum_shift 0) and sw = (pv - z) × w = 531660 × 1048576 =
    # 557485916160, as recorded. V = z + (531660 + (nv - z)) / 2 = z + (531660 - 529995) / 2
    # = z + 832 (832.5 rounded down) = 4138746104: next's lag V - nv = 530827 ns, prev's
    # -530828, next's deadline nd - V = 167508. The wakeup's fields are read as recorded.
    monkeypatch.syspath_prepend(str(ROOT / "oracle"))
    import eevdf
    text = (
        " schbench-worker-156   [000]     6.052007: eevdf_switch:         (ffffffff9b5af2a4) "
        "pp=156 pv=4139276932 pd=4139975267 pl=23927 pdl=0 pq=1 pw=1048576 pr=4135975267 "
        "np=155 nv=4138215277 nd=4138913612 nl=197896 ndl=0 nq=1 nw=1048576 nr=4138913612 "
        "z=4138745272 sw=557485916160 sW=1048576 sh=0\n"
        " schbench-worker-155   [000]     5.849614: eevdf_wakeup:         (ffffffff9b5b60b4) "
        "p=154 v=4037493800 d=4037592431 l=-109302 dl=0 q=1 w=1048576 r=4037592431 "
        "z=4037384498 sw=22365077504 sW=3145728 sh=0\n")
    switch, wakeup = eevdf.events(text)
    assert eevdf.avg_vruntime(switch.f) == 4138746104
    assert eevdf.line(switch) == (
        "6.052007 switch    156 lag    -530.8 d-V    1229.2 queued ==>    155 lag     530.8 "
        "d-V     167.5  V 4138746104")
    assert eevdf.line(wakeup) == (
        "5.849614 wakeup    154  vlag    -109.3  v-z     109.3  d-z     207.9  delayed 0")
    # 6.x's sums count a nice-0 weight scaled down, as 1024.
    assert eevdf.summed(1048576, {}) == 1024 and eevdf.summed(15, {}) == 2


def test_try_probes_the_eevdf_state_first_and_any_mix_of_options_is_sound_shell(guest, monkeypatch):
    oracle_py, boot, _ = guest
    scripts = []

    def boot_retrying(kernel, vcpus, files, limit, append=""):
        scripts.append(files["run.sh"].decode())
        raise oracle_py.OracleError("stop here")
    monkeypatch.setattr(boot, "boot_retrying", boot_retrying)
    probes = (ROOT / "oracle" / "guest" / "eevdf.sh").read_text()
    for extra in (["--feature", "NO_HRTICK"], ["--probe", "eevdf"],
                  ["--feature", "NO_HRTICK", "--probe", "eevdf", "--before", "true"]):
        assert oracle_py.main(["try", "pipe-1@7.3", *extra]) == 2
        script = scripts[-1]
        assert subprocess.run(["bash", "-n"], input=script, text=True).returncode == 0, extra
        assert (f"( {probes})" in script) == ("--probe" in extra)
    assert scripts[0].splitlines()[0] == (
        "{ echo NO_HRTICK > /sys/kernel/debug/sched/features; } > before.log 2>&1")


def test_try_traces_the_events_it_names_too(guest, monkeypatch, tmp_path):
    oracle_py, boot, _ = guest
    jobs = []

    def boot_retrying(kernel, vcpus, files, limit, append=""):
        jobs.append(files)
        raise oracle_py.OracleError("stop here")
    monkeypatch.setattr(boot, "boot_retrying", boot_retrying)
    events = ["timer:hrtimer_start", "timer:hrtimer_expire_entry"]
    assert oracle_py.main(["try", "cpumax-root@7.3", *(a for e in events for a in ("--event", e))]) == 2
    job = tmp_path / "job"
    job.mkdir()
    for name, data in jobs[0].items():
        (job / name).write_bytes(data)
    assert subprocess.run(["bash", "-n", job / "run.sh"]).returncode == 0
    # The guest's tracing as the job sources it, trace-cmd's arguments caught.
    script = 'trace-cmd() { echo "$@" > "$JOB/args"; }; . "$JOB/trace.sh"; trace_start'
    subprocess.run(["bash", "-c", script], env={"JOB": str(job), "PATH": "/usr/bin:/bin"},
                   capture_output=True, check=True)
    args = (job / "args").read_text().split()
    assert args[args.index("sched:sched_process_exit") + 1:] == [
        "-e", "timer:hrtimer_start", "-e", "timer:hrtimer_expire_entry", "-e", "task:task_rename"]
    assert oracle_py.main(["try", "cpumax-root@7.3", "--event", "timer hrtimer_start"]) == 2
    assert len(jobs) == 1  # refused before any boot


@pytest.mark.parametrize("last_line, status", [
    # schbench's read_sched_delay after its last report, a thread just gone: its report whole.
    ("Failed to parse /proc/131/schedstat", "schbench=0"),
    ("Error: something else", "schbench=calibrate-all"),
])
def test_the_schbench_job_times_the_work_with_a_worker_per_cpu_and_bears_schbench_s_exit_race(
        tmp_path, last_line, status):
    # The guest's schbench job with a stand-in schbench that prints its last report, then
    # `last_line`, and exits 1 when run with a worker per CPU (2 here); trace-cmd's part a no-op.
    job, work, bin_ = tmp_path / "job", tmp_path / "work", tmp_path / "bin"
    for d in (job, work, bin_):
        d.mkdir()
    (job / "params").write_text("SCHBENCH_ARGS='-m 1 -r 5'\n")
    (job / "trace.sh").write_text("trace_start() { :; }\ntrace_stop() { :; }\n")
    (job / "schbench").write_text(
        '#!/bin/sh\necho "$*" >> "$JOB/calls"\necho "average rps: 138.00"\n'
        f'case "$*" in *"-t 2 "*) echo "{last_line}" >&2; exit 1 ;; esac\n')
    (bin_ / "nproc").write_text("#!/bin/sh\necho 2\n")
    (bin_ / "nproc").chmod(0o755)
    subprocess.run(["sh", ROOT / "oracle" / "guest" / "schbench.sh"], cwd=work, check=True,
                   env={"JOB": str(job), "PATH": f"{bin_}:/usr/bin:/bin"})
    calls = (job / "calls").read_text().splitlines()
    assert calls[:2] == ["-C -m 1 -t 1 -r 2 -s 0", "-C -m 1 -t 2 -r 5 -s 0"]
    assert (work / "status").read_text().strip() == status
    assert (work / "calibrate-all.log").read_text().splitlines() == ["average rps: 138.00", last_line]
    assert calls[2:] == (["-m 1 -r 5"] if status == "schbench=0" else [])
