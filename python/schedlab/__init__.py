"""schedlab: a fast, deterministic, Linux-faithful simulator of the kernel's CPU scheduler."""

from importlib.metadata import version

from schedlab._core import InputError
from schedlab import pelt
from schedlab.energy import energy_model
from schedlab.run import RunResult, RunSpec, run

__version__ = version("schedlab")
__all__ = ["InputError", "RunResult", "RunSpec", "energy_model", "pelt", "run", "__version__"]
