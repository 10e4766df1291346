"""Where outputs go: a symbolic link is followed (its target gets the output, the link
stays), a device or a FIFO is written in place, and an output never replaces an input or
another output (docs/outputs.md)."""

import os
import stat
import subprocess
import sys
import threading

import pytest

WORKLOAD = '{"tasks": {"t": {"loop": 3, "run": 1000, "sleep": 1000}}}'


@pytest.fixture
def workload(tmp_path):
    path = tmp_path / "w.json"
    path.write_text(WORKLOAD)
    return path


def test_an_output_through_a_symlink_goes_to_its_target(tmp_path, workload, cli):
    for name in ("t.txt", "s.json"):
        (tmp_path / f"link-{name}").symlink_to(f"real-{name}")
    r = cli("run", workload, "-q", "--trace", tmp_path / "link-t.txt", "--summary", tmp_path / "link-s.json")
    assert r.returncode == 0, r.stderr.decode()
    for name in ("t.txt", "s.json"):
        assert (tmp_path / f"link-{name}").is_symlink() and (tmp_path / f"real-{name}").stat().st_size > 0
    assert (tmp_path / "real-t.txt").read_text().startswith("cpus=4")


def test_dev_null_takes_every_output_and_stays_a_device(tmp_path, workload, cli):
    r = cli("run", workload, "-q", "--trace", "/dev/null", "--trace-format", "dat", "--summary", "/dev/null",
            "--schedstat", "/dev/null")
    assert r.returncode == 0, r.stderr.decode()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not os.path.exists("/dev/null.plat_info.yml"), "no platform description beside a device"


def test_a_full_device_is_an_error_naming_it_and_stays_a_device(workload, cli):
    traces = [["--trace", "/dev/full", "--trace-format", f] for f in ("txt", "dat", "perfetto")]
    for args in [["--summary", "/dev/full"], *traces]:
        r = cli("run", workload, "-q", *args)
        err = r.stderr.decode()
        assert r.returncode == 2 and "No space left on device" in err and "Traceback" not in err, err
        assert "/dev/full" in err, err
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


def test_a_fifo_gets_the_trace_as_a_file_would(tmp_path, workload, cli):
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    r = cli("run", workload, "-q", "--trace", fifo, "--trace-format", "txt")
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr.decode()
    assert cli("run", workload, "-q", "--trace", tmp_path / "t.txt").returncode == 0
    assert got == [(tmp_path / "t.txt").read_bytes()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize("args, message", [
    (["run", "w.json", "--trace", "w.json"], "w.json: the trace would replace the workload (w.json)"),
    (["run", "w.json", "--summary", "w.json"], "w.json: the summary would replace the workload (w.json)"),
    (["run", "w.json", "--schedstat", "link.json"], "the schedstat would replace the workload (w.json)"),
    (["run", "w.json", "--trace", "x.txt", "--summary", "x.txt"], "x.txt: the trace is the same file as the summary"),
    (["report", "w.json", "-o", "w.json"], "w.json: the report would replace the workload (w.json)"),
    (["compare", "w.json", "-o", "w.json"], "w.json: the comparison would replace the workload (w.json)"),
])
def test_an_output_that_is_an_input_or_another_output_is_refused(tmp_path, workload, cli, args, message):
    (tmp_path / "link.json").symlink_to("w.json")
    r = subprocess.run([sys.executable, "-m", "schedlab", *args, "-q"] if args[0] == "run" else
                       [sys.executable, "-m", "schedlab", *args], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 2 and message in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert workload.read_text() == WORKLOAD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.json", "w.json"]


def test_compare_refuses_run_outputs_it_would_not_write(workload, cli):
    r = cli("compare", workload, "--a", "--kernel 6.1", "--trace", "t.txt")
    err = r.stderr.decode()
    assert r.returncode == 2 and "compare: --trace is not for compare" in err, err
