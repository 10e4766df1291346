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
