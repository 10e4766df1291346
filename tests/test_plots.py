"""schedlab.plots' drawing choices: min–max thinning, held signals, one colour per CPU."""

import numpy as np

import schedlab
from schedlab import plots


def test_thinning_keeps_each_buckets_lowest_and_highest_point():
    x = np.arange(100_000)
    y = np.sin(x / 997.0)
    y[31_337], y[77_777] = -5.0, 5.0  # one trough and one peak among 100,000 points
    tx, ty = plots.thin(x, y, n=1000)
    assert len(tx) <= 1000 and (np.diff(tx) > 0).all()
    assert {31_337, 77_777} <= set(tx.tolist()) and ty.min() == -5.0 and ty.max() == 5.0
    assert plots.thin(x[:10], y[:10], n=1000)[0].tolist() == list(range(10))


def test_cpu_util_is_held_between_updates_and_each_cpu_has_one_colour():
    run = schedlab.run({"tasks": {"t": {"instance": 4, "run": 2000, "sleep": 8000}}}, "smp:16", duration_ns="200ms")
    fig = plots.plot_cpus_util(run)
    assert len(fig.series) == 32 and all(s.kind == "step" for s in fig.series)
    colours = plots._colours(fig)
    assert colours[0::2] == colours[1::2], "a CPU's util and capacity share a colour"
    assert len(set(colours)) == 16, "16 CPUs, 16 colours"
    drawn = plots.to_plotly(fig)
    assert {t.line.shape for t in drawn.data} == {"hv"}
    assert [t.line.color for t in drawn.data] == colours
