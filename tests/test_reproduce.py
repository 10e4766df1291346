import pytest

from schedlab.reproduce import experiments, run_job

# Seed 000's table: (capacity, invariance) → values in ms, which the thread reads as periods.
SEED = {
    (1024, "clock_pelt"): [138, 30, 13],
    (1024, "legacy"): [138, 30, 13],
    (512, "legacy"): [None, 138, 32],
    (512, "clock_pelt"): [276, 60, 26],
}


def test_registry_holds_seed_000():
    registry = experiments()
    assert "pelt-invariance" in registry
    assert "000_6f41fe18b85b8edc" in registry["pelt-invariance"].source


def test_pelt_invariance_sources_are_the_seeds_and_all_ok():
    figures = experiments()["pelt-invariance"].run()
    sources = [f.source for f in figures]
    expected = [("not reachable" if v is None else str(v)) for values in SEED.values() for v in values]
    # Then the half-capacity columns again, measured in the engine at half frequency.
    engine = [("not reachable" if v is None else str(v)) for (cap, _), values in SEED.items() if cap == 512
              for v in values]
    assert sources == expected + engine
    assert all(f.ok for f in figures), [f for f in figures if not f.ok]


def test_reproduce_command(cli):
    r = cli("reproduce")
    out = r.stdout.decode()
    assert r.returncode == 0, out
    figures = [f for e in experiments().values() for f in e.run()]
    explained = sum(not f.ok for f in figures)
    assert all(f.ok or f.explained for f in figures)
    assert out.count(" OK ") == len(figures) - explained and out.count("OUTSIDE:") == explained
    assert "FAIL" not in out
    assert "1.048576" in out and "UTIL_EST_MARGIN" in out


def test_reproduce_list_and_unknown(cli):
    r = cli("reproduce", "--list")
    assert r.returncode == 0 and b"pelt-invariance" in r.stdout
    r = cli("reproduce", "no-such-figure")
    assert r.returncode == 2 and b"no-such-figure" in r.stderr


# Seed 002 through the engine, against the integer series and the closed form.
from kernel_arith import PERIOD_NS, always_running_cfs_load, first_period_reaching, periodic_cpu  # noqa: E402

from schedlab.experiments import idle_prev_cpu as seed002  # noqa: E402

SIM_START = 10**9
Y = 0.5 ** (1 / 32)
# (run ns, period ns, run s, window s) as the engine runs them: rt-app durations are whole µs.
PERIODIC = [
    (20_972_000, 209_715_000, 3, 0.4),  # A, 20 and 200 PELT periods
    (20_000_000, 200_000_000, 3, 0.4),  # A, wall clock
    (102_000, 1_049_000, 6, 3.0),  # B, 100 and 1024 units of 1024 ns
    (100_000, 1_024_000, 6, 3.0),  # B, wall clock
]


def signals(run_ns: int, period_ns: int, secs: int, window: float):
    """The experiment's reading of CPU0's signals under one periodic task, kernel 6.1."""
    return seed002.cpu_signals(run_job(seed002.periodic_job(run_ns, period_ns, secs, "6.1")), window)


@pytest.mark.parametrize("run_ns, period_ns, secs, window", PERIODIC)
def test_seed002_periodic_cpu_signals_follow_the_integer_series(run_ns, period_ns, secs, window):
    sim = signals(run_ns, period_ns, secs, window)
    low, high, est = periodic_cpu(run_ns, period_ns, SIM_START, SIM_START + secs * 10**9, int(window * 1e9))
    assert abs(sim.util_min - low) <= 2 and abs(sim.util_max - high) <= 2, (sim, low, high)
    assert abs(sim.util_est - est) <= 2, (sim, est)
    # The continuous series, within the divider's 2.1% below it.
    r, p = run_ns / PERIOD_NS, period_ns / PERIOD_NS
    peak = 1024 * (1 - Y**r) / (1 - Y**p)
    for measured, exact in ((sim.util_max, peak), (sim.util_min, peak * Y ** (p - r))):
        assert exact * 46718 / 47741 - 2 <= measured <= exact + 2, (measured, exact)


def test_seed002_thread_figures_in_the_periods_reading():
    a = signals(20_972_000, 209_715_000, 3, 0.4)
    assert abs(a.util_min - 7) <= 2 and abs(a.util_max - 365) <= 2
    # util_est keeps its EWMA within UTIL_EST_MARGIN above the thread's 365.
    assert 365 - 2 <= a.util_est < 365 + 10


def test_seed002_wall_clock_reading_differs_from_the_thread():
    a = signals(20_000_000, 200_000_000, 3, 0.4)
    assert abs(a.util_max - 365) > 2 and abs(a.util_max - 352) <= 2


def test_seed002_nice_minus_20_load_avg():
    load = seed002.hog_load_avg(run_job(seed002.hog_job("6.1", duration_s=2)))
    assert abs(load - 88763) <= 0.01 * 88763
    assert abs(load - always_running_cfs_load(88761, SIM_START, SIM_START + 2 * 10**9)) <= 2
    assert load > 47742  # weighted: above LOAD_AVG_MAX, as the thread observed


def test_seed002_and_003_experiments_all_ok():
    for name in ("idle-prev-cpu", "pelt-response"):
        figures = experiments()[name].run()
        assert figures and all(f.ok for f in figures), [f for f in figures if not f.ok]


def test_seed003_time_to_80_percent():
    figure = experiments()["pelt-response"].run()[0]
    periods = int(figure.measured.split()[0])
    assert periods == first_period_reaching(820)
    assert abs(periods - 75) <= 1


def test_grub_reproduces_seed_004():
    figures = experiments()["grub"].run()
    by_label = {f.label: f for f in figures}
    # The seed's numbers are the sources of the figures they judge.
    assert by_label["7/10, task 1, classic"].source == "93.3%"
    assert by_label["1/100, task 1, classic"].source == "16.7%"
    assert by_label["2 x 1/10 + 5/20, task 1, pillai-2023"].source == "35.0%"
    assert by_label["3 CPUs, CPU1 busy, pillai-2023"].source == "95.2%"
    # The nine GRUB examples are all run, under each equation.
    assert sum(f.label.startswith("deadline") and f.label.endswith("classic") for f in figures) >= 9
    assert all(f.ok for f in figures), [f for f in figures if not f.ok]
