"""schedlab: a fast, deterministic, Linux-faithful simulator of the kernel's CPU scheduler."""

from importlib.metadata import version

from schedlab._core import InputError
from schedlab import pelt
from schedlab.run import RunResult, run

__version__ = version("schedlab")
__all__ = ["InputError", "RunResult", "pelt", "run", "__version__"]
