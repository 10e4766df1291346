"""The kernel's EEVDF state from a trace made with `oracle.py try CASE@K --probe eevdf`
(guest/eevdf.sh): each switch's and wakeup's entities, relative to the queue's V.

  eevdf.py TRACE [--pid PID]...   TRACE: a trace.dat (read with trace-cmd report) or its text

One line an event, times in µs of vruntime: at a switch, V after the pick (`avg_vruntime`:
the queued entities' weighted mean with next, the new curr) and prev's and next's lag V - v
(positive: owed service, eligible) and deadline - V; at a wakeup, the woken entity's lag as
kept (vlag) and its vruntime and deadline against zero_vruntime, which the enqueue's
avg_vruntime has just set to V (or, when the wakeup preempted, to V before the enqueue).
"""

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

from errors import OracleError
from oracle import report

from schedlab.conformance import ftrace

PROBES = {"eevdf_switch", "eevdf_wakeup"}
# 6.x's sums count a weight scaled down (scale_load_down: 10 bits); 7.x's its h_load weight,
# shifted by the queue's sum_shift when one sum would overflow (avg_vruntime_weight).
SCALE_DOWN = 10


@dataclass
class Event:
    ts: int  # ns
    name: str
    f: dict[str, int]


def events(text: str):
    """The probes' events in a trace-cmd report's text, their fields as integers."""
    for e in ftrace.events(text, PROBES):
        yield Event(e.ts, e.name, {k: int(v, 0) for k, v in e.fields.items()})


def summed(weight: int, f: dict[str, int]) -> int:
    """An entity's weight as its queue's sums count it."""
    shift = f["sh"] if "sh" in f else SCALE_DOWN
    if shift == 0 or weight == 0:
        return weight
    return max(2, weight >> shift)


def avg_vruntime(f: dict[str, int]) -> int:
    """V at a switch: zero_vruntime plus the weighted mean key of the queued entities and next
    (curr, outside the sums), rounded toward minus infinity as the kernel divides."""
    w = summed(f["nw"], f)
    load = f["sW"] + w
    return f["z"] + (f["sw"] + (f["nv"] - f["z"]) * w) // load


def line(e: Event) -> str | None:
    f, us, t = e.f, lambda ns: f"{ns / 1000:9.1f}", f"{e.ts / 1e9:.6f}"
    if e.name == "eevdf_wakeup":
        return (f"{t} wakeup {f['p']:>6}  vlag {us(f['l'])}  v-z {us(f['v'] - f['z'])}"
                f"  d-z {us(f['d'] - f['z'])}  delayed {f['dl']}")
    if not f["np"] or f["sW"] + summed(f["nw"], f) == 0:
        return None  # the idle task picked: no fair queue to read
    v = avg_vruntime(f)
    prev = (f"{f['pp']:>6} lag {us(v - f['pv'])} d-V {us(f['pd'] - v)} "
            f"{'queued' if f['pq'] else 'asleep'}{' delayed' if f['pdl'] else ''}")
    return (f"{t} switch {prev} ==> {f['np']:>6} lag {us(v - f['nv'])} "
            f"d-V {us(f['nd'] - v)}  V {v}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="eevdf.py", description=__doc__.split("\n")[0])
    p.add_argument("trace")
    p.add_argument("--pid", type=int, action="append", default=[],
                   help="only the events of this task (repeatable)")
    a = p.parse_args(argv)
    try:
        raw = Path(a.trace).read_bytes()
        text = report(raw) if a.trace.endswith(".dat") else raw.decode(errors="replace")
    except (OSError, OracleError) as e:
        print(f"eevdf.py: {a.trace}: {e}", file=sys.stderr)
        return 2
    found = 0
    for e in events(text):
        found += 1
        pids = {e.f.get(k) for k in ("p", "pp", "np")}
        if a.pid and not pids & set(a.pid):
            continue
        out = line(e)
        if out:
            print(out)
    if not found:
        print(f"eevdf.py: {a.trace}: no eevdf_switch or eevdf_wakeup events "
              "(made without --probe eevdf?)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
