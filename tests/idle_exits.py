"""The time a CPU is out of idle without running a task: 1 ns for each timer interrupt that woke
it for a sleeper placed on another CPU (out of its idle state at the interrupt, back in 1 ns
later, switching nothing: docs/engine.md)."""


def interrupt_only_ns(events, cpu: int) -> int:
    ev = events[(events.cpu == cpu) & events.event.isin(["cpu_idle", "sched_switch"])]
    rows = list(zip(ev.event, ev.value, ev.ts))
    return sum(1 for (e0, v0, t0), (e1, v1, t1) in zip(rows, rows[1:])
               if e0 == e1 == "cpu_idle" and v0 == -1 and v1 != -1 and t1 == t0 + 1)
