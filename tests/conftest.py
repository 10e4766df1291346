import subprocess
import sys

import pytest


@pytest.fixture
def cli():
    """Run `schedlab ARGS...`; returns the CompletedProcess (bytes stdout/stderr)."""

    def run(*args, stdin=None):
        return subprocess.run([sys.executable, "-m", "schedlab", *map(str, args)], input=stdin,
                              capture_output=True)

    return run


@pytest.fixture(scope="session")
def trace_cmd() -> str:
    """trace-cmd: Debian's (CI installs it), else the one LISA bundles (`make test` installs
    LISA in the virtualenv)."""
    import shutil

    path = shutil.which("trace-cmd")
    if path is None:
        try:
            from lisa._assets import get_bin
        except ImportError:
            pass
        else:
            path = get_bin("trace-cmd")
    assert path, "trace-cmd is needed: apt-get install trace-cmd, or install schedlab[lisa]"
    return path


@pytest.fixture
def reload(tmp_path):
    """A run's result as its saved summary loads back (`RunResult.load`)."""
    import json

    import schedlab

    def load(r):
        p = tmp_path / "summary.json"
        p.write_text(json.dumps(r.summary(), default=int))
        return schedlab.RunResult.load(p)

    return load
