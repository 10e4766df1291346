"""LISA 3.1.0's readings that hang on how it orders rows of equal timestamps, written out so
that a test comparing LISA with schedlab holds whatever order LISA's unstable sorts give.

schedlab's traces give no task two state events (wakeup, switch in, switch out) at one
instant, but a sched_switch is two rows of LISA's task-state frame, the previous task's and
the next one's, at one timestamp. LISA's `df_window` drops the last row of a frame whose last
timestamp is shared (`df_window(df, (start, end))` on rows at 1.0, 1.5, 1.9, 1.9 returns
three), so at the trace's last state instant one of its rows is lost, whichever its sort put
last."""


def runtime_readings(result) -> dict[int, list[float]]:
    """Per pid, the run times (s) LISA's `df_tasks_runtime` may read for `result`'s trace: the
    run's own, and for a task switched at the last state instant T, the reading without that
    row (a task switched out then counted running to the trace's end, a task switched in
    then not counted from T)."""
    ev = result.events
    readings = {t["pid"]: [t["run_ns"] / 1e9] for t in result.task_rows}
    states = ev[ev.event.isin(["sched_switch", "sched_wakeup", "sched_wakeup_new"])]
    last = states[states.ts == states.ts.max()]
    end = result.start_ns / 1e9 + result.simulated_ns / 1e9
    span = end - last.ts.max() / 1e9
    for _, row in last[last.event == "sched_switch"].iterrows():
        if row.pid in readings:
            readings[row.pid].append(readings[row.pid][0] + span)
        if row.other_pid in readings:
            readings[row.other_pid].append(readings[row.other_pid][0] - span)
    return readings
