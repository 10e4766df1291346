"""`schedlab.compare` and `schedlab compare`: on seed 000's PELT schemes, seed 004's GRUB
equations and seed 003's governors the comparison gives the differences the experiments
measure (and, where there is one, the closed form); seeds give confidence intervals;
results of different workloads are refused."""

import json
from pathlib import Path

import numpy as np
import pytest

import schedlab
from schedlab.comparison import welch_ci
from schedlab.experiments import governor_efficiency, grub, schedutil_ramp
from schedlab.reproduce import run_job

CORPUS = Path(__file__).parent / "rtapp-corpus"


def test_seed_000_pelt_schemes():
    """clock_pelt reaches hikey's top OPP sooner than the legacy invariance: once there it
    stays, so the time at 1.2 GHz grows by exactly how much sooner it is reached (seed 000:
    223 → 121 ms): the ramp's shrinking, less the µs by which the kernel's work (different
    for the two schemes' PELT scaling) moved the busy phase's start."""
    legacy, clock = schedutil_ramp.spec("legacy").run(), schedutil_ramp.spec("clock_pelt").run()
    c = schedlab.compare(legacy, clock, labels=("legacy", "clock_pelt"))
    ramp = schedutil_ramp.ramp_ms(clock) - schedutil_ramp.ramp_ms(legacy)
    sooner_ms = (schedutil_ramp.ramp(legacy)[1] - schedutil_ramp.ramp(clock)[1]) * 1e3
    top = c.frequency.loc[(c.frequency.index.get_level_values("policy")[0], schedutil_ramp.MAX_KHZ)]
    top_ms = top["diff"] / 100 * legacy.simulated_ns / 1e6
    assert ramp < -50 and sooner_ms == pytest.approx(-ramp, abs=0.003)
    assert top_ms == pytest.approx(sooner_ms, abs=1e-6)


def test_seed_004_grub_equations():
    """One 2 ms / 10 ms reclaiming busy loop: its utilization under each equation is the
    experiment's, and the difference is that of the equations' closed forms."""
    tasks = [(2, 10, True)]
    classic, mainline = (grub.spec(tasks, 1, eq).run(frames=False) for eq in ("classic", "mainline"))
    c = schedlab.compare(classic, mainline, labels=("classic", "mainline"))
    row = c.tasks.loc[("t0-0", "utilization")]
    assert row["a"] == classic.task_rows[0]["utilization"] and row["b"] == mainline.task_rows[0]["utilization"]
    want = (grub.reclaim_share("mainline", 0.2, 0.2, grub.UMAX - 0.2)
            - grub.reclaim_share("classic", 0.2, 0.2, grub.UMAX - 0.2))
    assert row["diff"] == pytest.approx(want, abs=0.003)


def test_seed_003_governors():
    """The experiment's 50 ms run / 1000 ms sleep thread on hikey under performance and
    schedutil: the cluster's energy per side is the experiment's, and so is their difference."""
    jobs = governor_efficiency.runs()
    runs = {g: run_job(jobs[governor_efficiency.key(g, 50, 1000)]) for g in ("performance", "schedutil")}
    c = schedlab.compare(runs["performance"], runs["schedutil"])
    energy = c.clusters.loc[(0, "energy_mj")]
    want = {g: governor_efficiency.measure(r)[1] for g, r in runs.items()}
    assert energy["a"] == pytest.approx(want["performance"], rel=1e-12)
    assert energy["b"] == pytest.approx(want["schedutil"], rel=1e-12)
    assert energy["diff"] == pytest.approx(want["schedutil"] - want["performance"], rel=1e-9)
    assert energy["diff"] < 0


def test_seeds_give_confidence_intervals():
    a = [schedlab.run(CORPUS / "video-short.json", "hikey960", sets=[f"seed={s}"], duration_ns=500_000_000,
                      frames=False) for s in (1, 2, 3)]
    b = [schedlab.run(CORPUS / "video-short.json", "hikey960", governors=["schedutil"], sets=[f"seed={s}"],
                      duration_ns=500_000_000, frames=False) for s in (1, 2, 3)]
    c = schedlab.compare(a, b)
    energy = c.totals.loc["energy_mj"]
    ea, eb = np.array([r.energy_mj for r in a]), np.array([r.energy_mj for r in b])
    assert energy["a"] == pytest.approx(ea.mean()) and energy["diff"] == pytest.approx(eb.mean() - ea.mean())
    assert energy["ci_low"] < energy["diff"] < energy["ci_high"]


def test_welch_interval_against_a_hand_derivation():
    """a = (1, 2, 3), b = (5, 6, 7): each mean's variance 1/3, Welch's dof
    (2/3)² / ((1/3)²/2 + (1/3)²/2) = 4, and t(0.975, 4) = 2.776 (Student's table): the
    difference 4 ± 2.776·√(2/3)."""
    low, high = welch_ci(np.array([1.0, 2, 3]), np.array([5.0, 6, 7]))
    half = 2.776 * np.sqrt(2 / 3)
    assert (low, high) == pytest.approx((4 - half, 4 + half), abs=1e-3)


def test_compare_cli_and_saved_results(cli, tmp_path):
    wl = CORPUS / "video-short.json"
    r = cli("compare", wl, "--platform", "hikey960", "--duration", "500ms", "--a", "--governor performance",
            "--b", "--governor schedutil", "-o", tmp_path / "c.html")
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "--governor performance against --governor schedutil: totals" in out and "energy_mj" in out
    assert "<html" in (tmp_path / "c.html").read_text()
    for gov in ("performance", "schedutil"):
        assert cli("run", wl, "--platform", "hikey960", "--duration", "500ms", "--governor", gov, "-q",
                   "--summary", tmp_path / f"{gov}.json").returncode == 0
    r = cli("compare", "--results", tmp_path / "performance.json", tmp_path / "schedutil.json")
    assert r.returncode == 0, r.stderr
    saved = schedlab.compare(*(schedlab.RunResult.load(tmp_path / f"{g}.json") for g in ("performance", "schedutil")))
    live = schedlab.compare(*(schedlab.run(wl, "hikey960", governors=[g], duration_ns=500_000_000, frames=False)
                              for g in ("performance", "schedutil")))
    assert saved.totals.equals(live.totals)


def test_different_workloads_are_refused(cli, tmp_path):
    for name in ("video-short", "mp3-short"):
        assert cli("run", CORPUS / f"{name}.json", "--duration", "100ms", "-q", "--summary",
                   tmp_path / f"{name}.json").returncode == 0
    r = cli("compare", "--results", tmp_path / "video-short.json", tmp_path / "mp3-short.json")
    assert r.returncode == 2
    assert r.stderr.decode().startswith("schedlab: cannot compare results of different workloads: ")
    r = cli("compare", CORPUS / "video-short.json", "--a", "--kernel 5.4")
    assert r.returncode == 2 and b"--a '--kernel 5.4'" in r.stderr
    r = cli("compare", CORPUS / "video-short.json", "--b", "--colour red")
    assert r.returncode == 2 and b"not a run option: --colour red" in r.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"platform": "smp:4"}))
    r = cli("compare", "--results", bad, bad)
    assert r.returncode == 2 and b"not a schedlab run summary" in r.stderr


def test_compare_prints_the_tasks_and_cpus_that_differ_most_and_takes_dashed_side_options(cli, tmp_path):
    wl = tmp_path / "w.json"
    wl.write_text('{"tasks": {"t": {"instance": 3, "run": 3000, "sleep": 5000}}, "global": {"duration": 1}}')
    r = cli("compare", wl, "--platform", "smp:2", "--duration", "200ms", "--a", "--feature=NO_RUN_TO_PARITY",
            "--b", "--kernel 6.1")
    out = r.stdout.decode()
    assert r.returncode == 0, r.stderr.decode()
    assert "tasks: the 10 figures that differ most" in out and "CPUs: the 10 figures that differ most" in out
    assert "t-0 run_ns" in out or "t-0 wait_ns" in out
    bad = cli("compare", wl, "--a", "--json-c")
    assert bad.returncode == 2 and b"not a run option: --json-c (it reads the workload" in bad.stderr
