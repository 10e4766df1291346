import json
import re

from kernel_arith import PERIOD_NS, always_running_util, first_period_reaching

HEADER = b"now_ns,load_sum,runnable_sum,util_sum,period_contrib,load_avg,runnable_avg,util_avg\n"


def csv_rows(n):
    return "now_ns,load,runnable,running\n" + "".join(f"{k * PERIOD_NS},1,1,1\n" for k in range(n + 1))


def test_version_and_help(cli):
    v = cli("--version")
    assert v.returncode == 0 and re.match(rb"schedlab \d+\.\d+\.\d+", v.stdout)
    for args in (["--help"], ["pelt", "--help"], ["pelt", "replay", "--help"], ["reproduce", "--help"]):
        assert cli(*args).returncode == 0


def test_replay_csv_matches_the_integer_series(cli, tmp_path):
    path = tmp_path / "in.csv"
    path.write_text(csv_rows(200))
    r = cli("pelt", "replay", path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines(keepends=True)
    assert lines[0] == HEADER
    util = [int(line.split(b",")[-1]) for line in lines[2:]]
    assert util == always_running_util(200)


def test_replay_reads_stdin_any_column_order_and_spaces(cli):
    text = "running, now_ns, runnable, load\n0,0,0,0\n1, 2097152, 1, 1\n"
    r = cli("pelt", "replay", "-", stdin=text.encode())
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-1].startswith(b"2097152,")


def bad(cli, tmp_path, text, *args):
    path = tmp_path / "in.csv"
    path.write_text(text)
    r = cli("pelt", "replay", path, *args)
    assert r.returncode == 2
    assert r.stdout == b""
    err = r.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err
    assert str(path) in err
    return err


def test_replay_bad_input_names_line_and_column(cli, tmp_path):
    assert "line 3, column now_ns" in bad(cli, tmp_path, "now_ns,load,runnable,running\n5000,1,1,1\n4000,1,1,1\n")
    assert "line 2, column load" in bad(cli, tmp_path, "now_ns,load,runnable,running\n0,x,1,1\n")
    assert "line 2, column now_ns" in bad(cli, tmp_path, "now_ns,load,runnable,running\n1.5,1,1,1\n")
    assert "missing column 'running'" in bad(cli, tmp_path, "now_ns,load,runnable\n0,1,1\n")
    err = bad(cli, tmp_path, "now_ns,load,runnable,running\n0,1,1,1\n10,1,0,1\n")
    assert "line 3, column running" in err and "runnable=0" in err
    assert "line 2" in bad(cli, tmp_path, "now_ns,load,runnable,running\n0,1,1\n")
    assert "--weight" in bad(cli, tmp_path, "now_ns,load,runnable,running\n", "--weight", "0")


def test_missing_file_is_a_clear_error(cli, tmp_path):
    r = cli("pelt", "replay", tmp_path / "nope.csv")
    assert r.returncode == 2 and b"nope.csv" in r.stderr and b"Traceback" not in r.stderr


def test_usage_errors(cli):
    r = cli("pelt", "periodic", "--run", "20xs", "--period", "200ms")
    assert r.returncode == 2 and b"20xs" in r.stderr and r.stdout == b""
    r = cli("pelt", "ramp", "--capacity", "512", "--freq-ratio", "0.5")
    assert r.returncode == 2 and b"not allowed with" in r.stderr
    r = cli("pelt", "periodic", "--run", "20ms", "--period", "200ms", "--frobnicate")
    assert r.returncode == 2 and b"--frobnicate" in r.stderr
    r = cli("pelt", "periodic", "--run", "190ms", "--period", "200ms", "--capacity", "512")
    assert r.returncode == 2 and b"never sleep" in r.stderr and r.stdout == b""


def test_periodic_csv_and_summary_are_deterministic(cli):
    args = ("pelt", "periodic", "--run", "20ms", "--period", "200ms", "--capacity", "512", "--invariance", "legacy")
    first, second = cli(*args), cli(*args)
    assert first.returncode == 0 and (first.stdout, first.stderr) == (second.stdout, second.stderr)
    assert first.stdout.decode().splitlines()[0].startswith("now_ns,event,pelt_now_ns,")
    # The CSV is all rows; the settled bounds go to stderr.
    summary = first.stderr.decode()
    assert summary.startswith("settled util_avg over the last period: min ") and summary.count("\n") == 1
    m = re.search(r"min (\d+) max (\d+); seed 000 closed form \(legacy\): min ([\d.]+) max ([\d.]+)", summary)
    settled_min, settled_max, lo, hi = map(float, m.groups())
    assert abs(settled_min - lo) <= 2 and abs(settled_max - hi) <= 2


def test_ramp_prints_periods_and_ms(cli):
    r = cli("pelt", "ramp", "--to", "972,486,256", "--capacity", "512", "--invariance", "legacy")
    assert r.returncode == 0
    n486, n256 = (first_period_reaching(t, 1002 * 512) for t in (486, 256))
    assert r.stdout.decode().splitlines() == [
        "target,periods,ms", "972,not reachable,not reachable",
        f"486,{n486},{n486 * 1.048576:.3f}", f"256,{n256},{n256 * 1.048576:.3f}"]


def test_deadline_run_reports_refusals_and_bad_parameters(cli, tmp_path):
    def task(name, q, p, extra=""):
        return (f'"{name}": {{"policy": "SCHED_DEADLINE", "dl-runtime": {q}, "dl-period": {p}, {extra}'
                f'"run": 1000, "timer": {{"ref": "unique", "period": {p}}}}}')
    ok = tmp_path / "dl.json"
    # 0.6 + 0.6 > 0.95 on one CPU: the second thread is refused, the run goes on.
    ok.write_text('{"global": {"duration": 1, "calibration": 100}, "tasks": {'
                  + task("a", 6000, 10000, '"dl-reclaim": true, ') + "," + task("b", 6000, 10000) + "}}")
    r = cli("run", str(ok), "--platform", "smp:1", "--trace", str(tmp_path / "t.txt"))
    assert r.returncode == 0, r.stderr
    assert b"refused: b-1: sched_setattr(SCHED_DEADLINE" in r.stderr
    assert b"SCHED_DEADLINE" in r.stdout and b"refused" in r.stdout
    trace = (tmp_path / "t.txt").read_text()
    assert "sched_dl_replenish:" in trace and "next_prio=-1" in trace
    bad = tmp_path / "bad.json"
    bad.write_text('{"global": {"duration": 1}, "tasks": {' + task("c", 20000, 10000) + "}}")
    r = cli("run", str(bad), "--platform", "smp:1")
    assert r.returncode == 2 and r.stdout == b"" and b"Traceback" not in r.stderr
    assert f"{bad}: tasks.c.dl-runtime: ".encode() in r.stderr and b"exceeds the deadline" in r.stderr


def test_periodic_csv_reads_back_in_pandas_and_polars(cli):
    import io

    import pandas as pd
    import polars as pl

    out = cli("pelt", "periodic", "--run", "20ms", "--period", "200ms").stdout
    df = pd.read_csv(io.BytesIO(out))
    pf = pl.read_csv(io.BytesIO(out))
    assert len(df) == len(pf) == out.count(b"\n") - 1
    assert df["now_ns"].dtype == "int64" and df["util_avg"].dtype == "int64" and df["event"].dtype == object
    assert pf["now_ns"].dtype == pl.Int64 and pf["util_avg"].dtype == pl.Int64 and pf["event"].dtype == pl.String


def test_run_dash_o_writes_the_trace_as_trace_cmd_record_does(cli, tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text('{"tasks": {"t": {"loop": 3, "run": 1000, "sleep": 1000}}}')
    assert cli("run", wl, "-q", "-o", tmp_path / "a.dat").returncode == 0
    assert cli("run", wl, "-q", "--trace", tmp_path / "b.dat").returncode == 0
    assert (tmp_path / "a.dat").read_bytes() == (tmp_path / "b.dat").read_bytes()
    assert (tmp_path / "a.plat_info.yml").exists()


def test_benchmarks_take_quiet_and_top_and_name_one_range(cli):
    quiet = cli("perf-bench-pipe", "-l", "1000", "--quiet")
    assert quiet.returncode == 0 and quiet.stdout == b""
    top = cli("perf-bench-pipe", "-l", "1000", "--top", "1").stdout.decode()
    assert "ops/sec" in top and "sched-pipe-" in top and "more tasks with less run time" in top
    # The option's range is the core's, however large the number.
    for value in ("0", "99999999999", "99999999999999999999999"):
        r = cli("hackbench", "-g", value)
        assert r.returncode == 2 and b"-g/--groups" in r.stderr, r.stderr
        assert b"out of range: 1 to 16384" in r.stderr or b"is not a whole number" in r.stderr, r.stderr
    assert b"out of range: 1 to 16384" in cli("hackbench", "-g", "99999999999").stderr


def test_many_warnings_are_counted_after_the_first_ten(cli, tmp_path):
    # 20 taskgroups rt-app would create: a warning each.
    tasks = {f"t{i}": {"loop": 1, "run": 100, "taskgroup": f"/g{i}"} for i in range(20)}
    wl = tmp_path / "w.json"
    wl.write_text(json.dumps({"tasks": tasks}))
    r = cli("run", wl, "-q", "--summary", tmp_path / "s.json")
    lines = r.stderr.decode().splitlines()
    assert r.returncode == 0 and len(lines) == 11 and lines[-1] == "warning: … and 10 more (--summary FILE.json lists them all)"
    assert len(json.loads((tmp_path / "s.json").read_text())["warnings"]) == 20
