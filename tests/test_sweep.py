"""`schedlab sweep` and `schedlab.sweep`: grids, resume, failures, Ctrl-C, bad grids, and
the same grid on a real Dask cluster (a LocalCluster over TCP on loopback) giving the same
Parquet bytes as the local pool."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import schedlab
from schedlab import sweeps

CORPUS = Path(__file__).parent / "rtapp-corpus"
VIDEO = CORPUS / "video-short.json"


def grid(tmp_path, axes: str, base: str = "") -> Path:
    path = tmp_path / "grid.toml"
    path.write_text(f'[base]\nworkload = "{VIDEO}"\nplatform = "hikey960"\nduration = "200ms"\n{base}\n'
                    f"[axes]\n{axes}\n")
    return path


def test_points_are_the_axes_product_in_order(tmp_path):
    points = sweeps.load_grid(grid(tmp_path, 'kernel = ["6.1", "6.12"]\ngovernor = ["performance", "schedutil"]\n'
                                             '"set.fair.base_slice_ns" = [700000, 3000000]'))
    assert [dict(p.params) for p in points][:3] == [
        {"kernel": "6.1", "governor": "performance", "set.fair.base_slice_ns": 700000},
        {"kernel": "6.1", "governor": "performance", "set.fair.base_slice_ns": 3000000},
        {"kernel": "6.1", "governor": "schedutil", "set.fair.base_slice_ns": 700000}]
    assert len(points) == 8 and len({p.key for p in points}) == 8
    p = points[1].spec
    assert (p.kernel, p.platform, p.duration_ns, p.governors, p.sets) == (
        "6.1", "hikey960", 200_000_000, ("performance",), ("fair.base_slice_ns=3000000",))
    # The point carries the workload's text, so it runs where the file is not.
    assert p.workload == VIDEO.read_text() and p.origin == str(VIDEO)


def test_a_point_is_a_plain_run(tmp_path):
    """A sweep row's metrics are those of `schedlab.run` with the same settings."""
    df = schedlab.sweep(sweeps.load_grid(grid(tmp_path, 'governor = ["schedutil"]')), jobs=1)
    r = schedlab.run(VIDEO, "hikey960", governors=["schedutil"], duration_ns=200_000_000, frames=False)
    row = df.iloc[0]
    assert row["status"] == "ok" and row["energy_mj"] == r.energy_mj
    assert row["run_ns"] == sum(t["run_ns"] for t in r.task_rows)
    assert row["max_latency_p99_ns"] == max(t["latency_p99_ns"] for t in r.task_rows)


def test_resume_skips_finished_points_and_reruns_changed_ones(tmp_path):
    out = tmp_path / "out.parquet"
    first = sweeps.load_grid(grid(tmp_path, 'seed = [1, 2, 3]'))
    schedlab.sweep(first, out=out, jobs=1)
    seen = []
    again = schedlab.sweep(first, out=out, jobs=1, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(3, 3)]  # all done before anything runs
    # Seed 3 → 4 changes one point: only it runs; the rows stay in grid order.
    seen.clear()
    changed = sweeps.load_grid(grid(tmp_path, 'seed = [1, 2, 4]'))
    df = schedlab.sweep(changed, out=out, jobs=1, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(2, 3), (3, 3)]
    assert df["seed"].tolist() == ["1", "2", "4"] and pd.read_parquet(out)["seed"].tolist() == ["1", "2", "4"]
    assert df.iloc[:2].equals(again.iloc[:2])


def test_a_failing_point_is_recorded_and_the_sweep_goes_on(tmp_path):
    pinned = tmp_path / "pinned.json"
    pinned.write_text('{"tasks": {"p": {"run": 1000, "sleep": 1000, "cpus": [5]}}, "global": {"duration": 1}}')
    path = tmp_path / "grid.toml"
    path.write_text(f'[base]\nworkload = "{pinned}"\n[axes]\nplatform = ["smp:2", "smp:8"]\n')
    df = schedlab.sweep(sweeps.load_grid(path), jobs=2, out=tmp_path / "out.parquet")
    assert df["status"].tolist() == ["error", "ok"]
    assert "CPU 5 is outside the platform smp:2" in df["error"].iloc[0]
    assert df["run_ns"].iloc[1] > 0
    # No error is a null, in the frame and in the Parquet file.
    assert pd.isna(df["error"].iloc[1])
    import pyarrow.parquet as pq

    error = pq.read_table(tmp_path / "out.parquet").column("error")
    assert str(error.type) == "string" and error.null_count == 1 and error[0].as_py() == df["error"].iloc[0]


def test_a_sweep_with_no_failure_has_a_string_error_column_of_nulls(tmp_path):
    import pyarrow.parquet as pq

    path = grid(tmp_path, 'seed = [1]')
    schedlab.sweep(sweeps.load_grid(path), out=tmp_path / "out.parquet", jobs=1)
    error = pq.read_table(tmp_path / "out.parquet").column("error")
    assert str(error.type) == "string" and error.null_count == 1


@pytest.mark.parametrize("axes, base, message", [
    ('colour = ["red"]', "", "axes.colour: unknown axis"),
    ("kernel = []", "", "axes.kernel: empty axis"),
    ('kernel = "6.1"', "", "axes.kernel: expected a list"),
    ('"set.fair.base_slice_ns" = [700000, -5]', "", "set.fair.base_slice_ns=-5"),
    ('kernel = ["5.4"]', "", "5.4"),
    ('platform = ["nosuchboard"]', "", "nosuchboard"),
    ('seed = [1]', "colour = 1", "base.colour: unknown setting"),
    ('seed = [1', "", "grid.toml"),
])
def test_bad_grids(tmp_path, cli, axes, base, message):
    r = cli("sweep", grid(tmp_path, axes, base), "-o", tmp_path / "out.parquet")
    assert r.returncode == 2, r.stderr
    err = r.stderr.decode()
    assert err.startswith("schedlab: ") and message in err and "Traceback" not in err and err.count("\n") == 1
    assert not (tmp_path / "out.parquet").exists()


def test_an_unreachable_dask_scheduler(tmp_path, cli):
    started = time.monotonic()
    r = cli("sweep", grid(tmp_path, "seed = [1]"), "--dask", "tcp://127.0.0.1:9")
    assert r.returncode == 2 and b"cannot reach the Dask scheduler at tcp://127.0.0.1:9" in r.stderr
    assert time.monotonic() - started < 60


def periodic_threads(path: Path, count: int = 40) -> Path:
    """`count` periodic threads of different periods: about 0.6 s of simulation per 200 s."""
    tasks = {f"t{i}": {"run": 1000 + 37 * i, "timer": {"ref": f"t{i}", "period": 8000 + 101 * i}}
             for i in range(count)}
    path.write_text(json.dumps({"tasks": tasks, "global": {"duration": 200}}))
    return path


def test_ctrl_c_keeps_finished_points_and_resumes(tmp_path):
    path = tmp_path / "grid.toml"
    path.write_text(f'[base]\nworkload = "{periodic_threads(tmp_path / "threads.json")}"\n'
                    'platform = "hikey960"\ngovernor = "schedutil"\n[axes]\nseed = [' +
                    ", ".join(map(str, range(1, 13))) + "]\n")
    out = tmp_path / "out.parquet"
    cmd = [sys.executable, "-m", "schedlab", "sweep", str(path), "-o", str(out), "--jobs", "2"]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, start_new_session=True)
    while not out.exists():
        assert proc.poll() is None, "the sweep ended before its first save"
        time.sleep(0.02)
    # The terminal's Ctrl-C: SIGINT to the whole process group.
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "run again to resume" in err, err
    kept = pd.read_parquet(out)
    assert 0 < len(kept) < 12 and (kept["status"] == "ok").all()
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0 and "12 points (12 ok, 0 failed)" in r.stdout, r.stderr
    done = pd.read_parquet(out)
    assert done["seed"].tolist() == [str(s) for s in range(1, 13)]
    # The rows kept are unchanged.
    again = done.set_index("point").loc[kept["point"]].reset_index()[kept.columns]
    pd.testing.assert_frame_equal(again, kept)


def sleep_then_mark(item: tuple) -> None:
    """A sweep item: sleep, then leave a marker file (in a worker process)."""
    seconds, marker = item
    time.sleep(seconds)
    Path(marker).touch()


def test_stopping_the_local_executor_early_ends_its_running_items(tmp_path):
    """A consumer that stops after the first result (bisect on a failed run, Ctrl-C) ends the
    workers: the 600 s sleep still running is killed and the one queued never starts, so
    neither leaves its marker (a stop that waited for them would find both written), and the
    stop does not hang as multiprocessing.Pool's terminate() can."""
    markers = [tmp_path / f"done{i}" for i in range(3)]
    results = sweeps.execute(sleep_then_mark, list(zip([0, 600, 600], map(str, markers))), jobs=2)
    assert next(results) == (0, None) and markers[0].exists()
    results.close()
    assert not markers[1].exists() and not markers[2].exists()


@pytest.fixture(scope="module")
def dask_client():
    """A real Dask cluster: a scheduler and two worker processes over TCP on loopback."""
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", protocol="tcp",
                      dashboard_address=None) as cluster, Client(cluster.scheduler_address) as client:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        yield client


def test_dask_gives_the_local_bytes(tmp_path, dask_client):

    points = sweeps.load_grid(grid(tmp_path, 'kernel = ["6.1", "6.12"]\ngovernor = ["performance", "schedutil"]\n'
                                             "seed = [1, 2]"))
    local, remote = tmp_path / "local.parquet", tmp_path / "dask.parquet"
    schedlab.sweep(points, out=local, jobs=2)
    schedlab.sweep(points, out=remote, client=dask_client)
    assert remote.read_bytes() == local.read_bytes()
    assert (pd.read_parquet(remote)["status"] == "ok").all()


def test_reproduce_on_dask_is_reproduce_here(dask_client):
    """The experiments' runs on the cluster, on two local processes and one after another
    in this process: the same figures."""
    from schedlab.reproduce import reproduce

    names = ["schedutil-ramp", "h-load", "pelt-invariance"]
    here = reproduce(names, jobs=1)
    for other in (reproduce(names, client=dask_client), reproduce(names, jobs=2)):
        assert {n: figures for n, (figures, _) in other.items()} == {n: figures for n, (figures, _) in here.items()}


def test_artefacts_are_each_points_trace_and_summary(tmp_path, cli):
    path = grid(tmp_path, "seed = [1, 2]")
    r = cli("sweep", path, "-o", tmp_path / "out.parquet", "--artefacts", tmp_path / "runs", "--jobs", "2")
    assert r.returncode == 0, r.stderr
    df = pd.read_parquet(tmp_path / "out.parquet")
    for _, row in df.iterrows():
        kept = tmp_path / "runs" / row["point"]
        summary = json.loads((kept / "summary.json").read_text())
        assert summary["switches"]["seed"] == row["seed"]
        assert sum(t["run_ns"] for t in summary["tasks"]) == row["run_ns"]
        assert (kept / "run.dat").read_bytes()[:3] == b"\x17\x08D"  # trace-cmd's magic
        assert (kept / "run.plat_info.yml").exists()
    r = cli("sweep", path, "-o", tmp_path / "o2.parquet", "--artefacts", tmp_path / "out.parquet")
    assert r.returncode == 2 and b"out.parquet" in r.stderr


def test_points_carry_their_files(tmp_path):
    """A point holds its workload's and its platform file's text: it runs where neither
    file is (a Dask worker on another machine), as it would where both are."""
    board, workload = tmp_path / "board.toml", tmp_path / "w.json"
    board.write_text((Path(__file__).parents[1] / "platforms" / "juno-r2.toml").read_text())
    workload.write_text(VIDEO.read_text())
    path = tmp_path / "grid.toml"
    path.write_text('[base]\nworkload = "w.json"\nduration = "300ms"\n[axes]\nplatform = ["board.toml"]\n')
    points = sweeps.load_grid(path)
    board.unlink()
    workload.unlink()
    away = schedlab.sweep(points, jobs=1)
    here = schedlab.run(VIDEO, "juno-r2", duration_ns=300_000_000, frames=False)
    assert away["status"].tolist() == ["ok"] and away["platform"].tolist() == ["board.toml"]
    assert away["energy_mj"].iloc[0] == here.energy_mj and away["run_ns"].iloc[0] == sum(
        t["run_ns"] for t in here.task_rows)


def test_a_sweep_with_a_failed_point_exits_1_with_the_count(tmp_path, cli):
    pinned = tmp_path / "pinned.json"
    pinned.write_text('{"tasks": {"p": {"run": 1000, "sleep": 1000, "cpus": [5]}}, "global": {"duration": 1}}')
    path = tmp_path / "grid.toml"
    path.write_text(f'[base]\nworkload = "{pinned}"\nduration = "10ms"\n[axes]\nplatform = ["smp:2", "smp:8"]\n')
    # --jobs 1000 for 2 points: 2 workers at most (capped at the points and the cores).
    r = cli("sweep", path, "--jobs", "1000")
    err = r.stderr.decode()
    assert r.returncode == 1 and "schedlab: 1 of 2 points failed" in err and "CPU 5 is outside" in err, err
    assert pd.read_parquet(tmp_path / "grid.parquet")["status"].tolist() == ["error", "ok"]


def test_a_script_must_guard_its_sweep_and_is_told_so(tmp_path):
    call = (f'schedlab.sweep(base={{"workload": "{VIDEO}", "duration": "50ms"}}, grid={{"seed": [1, 2]}}, jobs=2)')
    unguarded = tmp_path / "unguarded.py"
    unguarded.write_text(f"import schedlab\n\ndf = {call}\nprint(df['status'].tolist())\n")
    r = subprocess.run([sys.executable, str(unguarded)], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and f"{unguarded}:3: the sweep's worker processes import this script again" in r.stderr
    assert r.stderr.count("Traceback") == 1, "one error, not a pool of workers dying for ever"
    guarded = tmp_path / "guarded.py"
    guarded.write_text(f"import schedlab\n\nif __name__ == '__main__':\n    print({call}['status'].tolist())\n")
    r = subprocess.run([sys.executable, str(guarded)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "['ok', 'ok']" in r.stdout, r.stderr
