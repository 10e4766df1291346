"""The platforms' Energy Models, as the kernel's EM framework tables them."""

import pandas as pd

from schedlab import _core

COLUMNS = ["domain", "cpus", "khz", "performance", "power_uw", "cost", "inefficient", "cluster_power_mw"]


def energy_model(platform: str) -> pd.DataFrame:
    """One row per OPP of each frequency domain that has power figures: `performance`
    (capacity at that OPP), `power_uw` (one CPU's active power), `cost` (10·power/perf,
    em_compute_costs), `inefficient` (a faster OPP costs no more) and the cluster's extra
    active power in mW (NaN where the platform gives none)."""
    return pd.DataFrame(_core.energy_model(platform), columns=COLUMNS)
