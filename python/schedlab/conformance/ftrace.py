"""Reads `trace-cmd report -t` text (nanosecond timestamps), the kernel's and schedlab's alike,
into events: the same reader for both sides, so a difference is never the reader's. It takes
both spellings of sched_switch and sched_wakeup*: the kernel's print fmt (`prev_comm=… ==>
next_comm=…`, as schedlab writes) and trace-cmd's sched plugin (`comm:pid [prio] S ==> …`)."""

import re
from typing import Iterator, NamedTuple

LINE = re.compile(r"^\s*(?P<comm>.*?)-(?P<pid>\d+)\s+\[(?P<cpu>\d+)\]\s+(?:[\w.]{4,5}\s+)?"
                  r"(?P<secs>\d+)\.(?P<frac>\d+):\s+(?P<event>\w+):\s+(?P<body>.*)$")
FIELD = re.compile(r"(\w+)=(\S*)")
# trace-cmd's sched plugin: `comm:pid [prio] S ==> comm:pid [prio]`, `comm:pid [prio] CPU:nnn`
PLUGIN_SWITCH = re.compile(r"^(?P<prev_comm>.*):(?P<prev_pid>\d+) \[(?P<prev_prio>-?\d+)\] "
                           r"(?P<prev_state>\S+) ==> (?P<next_comm>.*):(?P<next_pid>\d+) "
                           r"\[(?P<next_prio>-?\d+)\]$")
PLUGIN_WAKEUP = re.compile(r"^(?P<comm>.*):(?P<pid>\d+) \[(?P<prio>-?\d+)\]"
                           r"(?: success=\d)? CPU:(?P<target_cpu>\d+)$")
# The events a record reads; the rest of a trace is skipped without splitting its fields.
EVENTS = {"sched_switch", "sched_wakeup", "sched_waking", "sched_wakeup_new",
          "sched_migrate_task", "sched_process_fork", "sched_process_exit", "task_rename",
          "print"}


class Event(NamedTuple):
    ts: int  # ns
    cpu: int
    pid: int  # the task current on cpu
    name: str
    fields: dict


def _ns(secs: str, frac: str) -> int:
    return int(secs) * 10**9 + int(frac.ljust(9, "0")[:9])


def events(text: str, names: frozenset[str] | set[str] = EVENTS) -> Iterator[Event]:
    """The events of a trace named in `names` (a record's: EVENTS), in its order."""
    for line in text.splitlines():
        m = LINE.match(line)
        if m is None or m["event"] not in names:
            continue
        body = m["body"].rstrip()
        if m["event"] == "print":  # a trace_marker write: `tracing_mark_write: TEXT`
            fields = {"text": body.split(": ", 1)[-1]}
            yield Event(_ns(m["secs"], m["frac"]), int(m["cpu"]), int(m["pid"]), "print", fields)
            continue
        plugin = (PLUGIN_SWITCH if m["event"] == "sched_switch" else PLUGIN_WAKEUP).match(body)
        if plugin and m["event"] in ("sched_switch", "sched_wakeup", "sched_wakeup_new"):
            fields = plugin.groupdict()
        elif m["event"] == "sched_switch":  # prev_comm=… ==> next_comm=…; comms keep spaces
            prev, _, nxt = body.partition(" ==> ")
            fields = dict(FIELD.findall(prev)) | dict(FIELD.findall(nxt))
            fields["prev_comm"] = _comm(prev, "prev_comm")
            fields["next_comm"] = _comm(nxt, "next_comm")
        else:
            fields = dict(FIELD.findall(body))
            for key in ("comm", "newcomm", "child_comm"):
                if key in fields:
                    fields[key] = _comm(body, key)
        yield Event(_ns(m["secs"], m["frac"]), int(m["cpu"]), int(m["pid"]), m["event"], fields)


def _comm(body: str, key: str) -> str:
    """A comm field's value up to the next ' key=' (a comm may hold spaces)."""
    start = body.index(key + "=") + len(key) + 1
    nxt = re.search(r" \w+=", body[start:])
    return body[start:start + nxt.start()] if nxt else body[start:]
