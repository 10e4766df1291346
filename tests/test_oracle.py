"""The oracle's refusals, which need no QEMU: one line, exit status 2, no record written."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
RECORDS = ROOT / "tests" / "conformance" / "records"


def oracle(*args, env=None):
    return subprocess.run([sys.executable, str(ROOT / "oracle" / "oracle.py"), *args],
                          capture_output=True, text=True, env=env, timeout=60)


def test_an_unknown_case_is_one_line_and_status_2():
    before = sorted(RECORDS.iterdir())
    r = oracle("record", "no-such-case")
    assert (r.returncode, r.stdout) == (2, "")
    assert r.stderr == "oracle: unknown case 'no-such-case' (see: oracle.py list)\n"
    assert sorted(RECORDS.iterdir()) == before


def test_missing_host_packages_are_named_with_the_command_that_installs_them(tmp_path):
    # No QEMU, mmdebstrap, cpio, dpkg or apt on an empty PATH: the message names the packages.
    env = dict(os.environ, PATH=str(tmp_path))
    r = oracle("setup", env=env)
    assert r.returncode == 2
    assert r.stderr == ("oracle: missing host packages: apt-get install apt cpio dpkg mmdebstrap "
                        "qemu-system-x86\n")


def test_an_unknown_kernel_is_refused(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "oracle"))
    import image
    from errors import OracleError
    with pytest.raises(OracleError, match=r"^unknown kernel '6.6': the oracle boots 6.1, 6.12$"):
        image.kernel_suite("6.6")


def test_the_list_names_every_case_with_its_state():
    r = oracle("list")
    assert r.returncode == 0
    lines = r.stdout.splitlines()
    assert len(lines) >= 25 and all(line.split()[1] in ("recorded", "-") for line in lines)
