"""schedlab: a fast, deterministic, Linux-faithful simulator of the kernel's CPU scheduler."""

from importlib import import_module

from schedlab._core import InputError, __version__
from schedlab.run import RunResult, RunSpec, run
__all__ = ["InputError", "RunResult", "RunSpec", "analysis", "compare", "energy_model", "pelt", "replay", "run",
           "sweep", "__version__"]

# Imported on first use: these build DataFrames (numpy, pandas), which `schedlab --version`,
# `check` or `platforms` never need (schedlab.run imports them only when it builds one).
_LAZY = {"pelt": ("schedlab.pelt", None), "energy_model": ("schedlab.energy", "energy_model"),
         "analysis": ("schedlab.analysis", None), "sweep": ("schedlab.sweeps", "sweep"),
         "compare": ("schedlab.comparison", "compare"), "replay": ("schedlab.replays", "replay")}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'schedlab' has no attribute '{name}'")
    module, attr = _LAZY[name]
    value = import_module(module) if attr is None else getattr(import_module(module), attr)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + list(_LAZY))
