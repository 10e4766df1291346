"""The bad-input suite (tests/bad_inputs/cases.json): each case writes its files, runs one
`schedlab` command, and expects its exit status, a fragment of the one-line message, no
traceback, and none of the outputs it names left behind. A file's content is its text,
{"from": PATH} (a file of the checkout), {"hex": BYTES} (bytes that need not be text), or
a list of {"text": T, "times": N} parts (T repeated N times: a deep nesting, a long file)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
CASES = json.loads((ROOT / "tests/bad_inputs/cases.json").read_text())


def content_bytes(content) -> bytes:
    if isinstance(content, str):
        return content.encode()
    if isinstance(content, list):
        return "".join(part["text"] * part.get("times", 1) for part in content).encode()
    if "hex" in content:
        return bytes.fromhex(content["hex"])
    return (ROOT / content["from"]).read_bytes()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input(case, tmp_path):
    for name, content in case["files"].items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content_bytes(content))
    out = subprocess.run([sys.executable, "-m", "schedlab", *case["args"]], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == case["status"], out.stderr
    assert case["message"] in out.stderr, out.stderr
    assert "Traceback" not in out.stderr and "panicked" not in out.stderr, out.stderr
    errors = [line for line in out.stderr.splitlines() if line.startswith("schedlab")]
    assert len(errors) == 1, out.stderr
    for name in case.get("absent", []):
        assert not (tmp_path / name).exists(), name
    assert not list(tmp_path.glob(".*.tmp")), "a temporary output is left"
