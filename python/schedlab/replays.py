"""`schedlab.replay`: a kernel trace (trace.dat, Perfetto or text) rebuilt as an rt-app workload,
with what the trace shows of each thread (docs/replay.md)."""

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from schedlab import _core

# The switch a replay's runs take: the trace's kernel threads are rebuilt as the workload's,
# so a platform's own (qemu-tcg:N's guest's) would run twice.
KTHREADS_OFF = "kthreads=off"

# Each thread's figures in the trace, as `schedlab replay --check` prints them.
OBSERVED = ["task", "pid", "run_ns", "wakeups", "latency_p50_ns", "latency_p99_ns", "migrations", "wake_prev"]


@dataclass(frozen=True)
class Replay:
    """A trace rebuilt: `workload` is rt-app JSON text that `schedlab.run`, `RunSpec.of`,
    `compare` and `sweep` take; `observed` the trace's own figures per thread (indexed by the
    workload's task names), `cpu_busy_ns` per CPU; `platform` the machine and `kernel` the
    preset the rebuild used (the kernel's work it would charge again is taken off the running
    stretches), `release` the traced kernel's, `length_ns` the trace's; `notes` what it
    assumed; `freq_residency_ns` each CPU's time at each frequency ({kHz: ns}; empty without
    `cpu_frequency` events). The trace's kernel threads are among the workload's: on a
    platform with kernel threads of its own (`qemu-tcg:N`), run it with `kthreads=off`."""
    workload: str
    notes: list
    platform: str
    kernel: str
    release: str | None
    length_ns: int
    observed: pd.DataFrame
    cpu_busy_ns: list
    freq_residency_ns: list


def replay(trace, platform: str | None = None, kernel: str | None = None, sets=(), attrs=None) -> Replay:
    """Rebuild `trace`'s threads on `platform` (None: `smp:N` for the trace's N CPUs) for
    runs of `kernel` (None: the trace's release, else 6.12) with switches `sets` (as `run`'s):
    what such a run adds to the trace's times (the cost model's charges, an emulator's work
    stretch) is taken off the running stretches. `attrs`: a side file (TOML) of rt-app task
    keys per thread for what the trace cannot say (docs/replay.md)."""
    r = _core.replay(Path(trace), platform, kernel, [sets] if isinstance(sets, str) else list(sets),
                     None if attrs is None else Path(attrs))
    observed = pd.DataFrame(r["threads"], columns=OBSERVED).set_index("task")
    return Replay(r["json"], r["notes"], r["platform"], r["kernel"], r["release"], r["length_ns"], observed,
                  r["cpu_busy_ns"], [dict(cpu) for cpu in r["freq_residency_ns"]])
