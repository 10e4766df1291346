"""The scheduler-cost model (--set overhead=on) and the operation counts, and h_load's two
ways (--set fair.h_load) doing the same arithmetic for different work."""

import schedlab

def platform(costs: str, cpus: str = "0", halt_exit_ns: int | str | None = None,
             more: str = "") -> str:
    """A platform file: CPUs `cpus` at 1 GHz, the cost table `costs` (and how long an idle
    CPU takes to run again, and `more` top-level lines)."""
    halt = "" if halt_exit_ns is None else f"halt_exit_ns = {halt_exit_ns}\n"
    return (f'\nname = "p"\ndescription = "CPUs {cpus} at 1 GHz"\n{halt}{more}[overhead]\n{costs}\n'
            f'[[freq_domain]]\nname = "c"\ncpus = "{cpus}"\ncapacity = 1024\n'
            'opps = [{ khz = 1000000 }]\n')


def costs(ops, ns=0, **more) -> str:
    """Cost-table lines: each of `ops` at `ns`, then `more`."""
    return "\n".join(f"{op}_ns = {n}" for op, n in {**dict.fromkeys(ops, ns), **more}.items())


FREE = ("context_switch", "wakeup_local", "wakeup_remote", "hrtimer_irq", "nanosleep", "pelt_update",
        "clock_pelt", "blocked_update")
# The derivations count one task (or two) alone: every thread started at once, without
# rt-app's main thread and its clone costs.
AT_ONCE = ["rtapp.start_barrier=off"]


def one_cpu(tmp_path, **op_ns) -> str:
    """One CPU whose operations cost `op_ns` (ns) and nothing else anything."""
    path = tmp_path / "one.toml"
    path.write_text(platform(costs(FREE, **op_ns)))
    return str(path)


def ops_of(r) -> dict:
    total = {}
    for o in r.op_rows:
        total[o["op"]] = total.get(o["op"], 0) + o["count"]
    return total


def test_the_tick_delays_the_work_it_interrupts(tmp_path):
    # 10 ms of work from 1 ns after t = 0 (a jiffy boundary; the idle CPU reschedules 1 ns
    # after the fork) at HZ=1000: the ticks at 1..9 ms take 9 µs, so the work is not done at
    # 10 ms, and the tick there takes 1 µs more: it runs 10.010 ms, of which 10 µs were the
    # kernel's.
    wl = {"global": {"default_policy": "SCHED_OTHER"}, "tasks": {"t": {"loop": 1, "run": 10_000}}}
    r = schedlab.run(wl, one_cpu(tmp_path, tick=1000), sets=["overhead=on", "hz=1000", *AT_ONCE])
    t, cpu = r.task_rows[0], r.cpu_rows[0]
    assert (t["run_ns"], t["sys_ns"], cpu["sys_ns"]) == (10_010_000, 10_000, 10_000)
    assert ops_of(r)["tick"] == 10
    # Off, the same work takes its 10 ms and nothing is charged, but everything is counted: the
    # work ends 1 ns after 10 ms, after that jiffy's tick, so 10 ticks.
    r = schedlab.run(wl, one_cpu(tmp_path, tick=1000), sets=["overhead=off", "hz=1000", *AT_ONCE])
    assert (r.task_rows[0]["run_ns"], r.task_rows[0]["sys_ns"], r.cpu_rows[0]["sys_ns"]) == (10_000_000, 0, 0)
    assert ops_of(r)["tick"] == 10 and all(o["sys_ns"] == 0 for o in r.op_rows)


def test_a_sleeps_system_call_is_the_sleepers_time(tmp_path):
    # Two tasks on one CPU, each running 100 µs and sleeping 1 ms, 5 times; a sleep's system
    # call costs 2 µs, which the sleeper spends on its CPU before it leaves (the timer is
    # armed from the call: 1 ms after its work ends). A's 100 µs end at 100 µs, its call at
    # 102: B, waiting since the start, runs 102-202 µs and leaves at 204. A wakes at 1100,
    # runs to 1200 and leaves at 1202, when B wakes (its expiry 202 + 1000) to a free CPU: no
    # later activation waits. So each runs 5 × 102 µs, 10 µs of it the kernel's, and 1 ns
    # after its last wakeup, before its exit (the engine's nanosecond per scheduling event).
    task = {"loop": 5, "run": 100, "sleep": 1000}
    wl = {"global": {"default_policy": "SCHED_OTHER"}, "tasks": {"a": task, "b": task}}
    r = schedlab.run(wl, one_cpu(tmp_path, tick=0, nanosleep=2000), sets=["overhead=on", "timer.slack_ns=0", *AT_ONCE])
    a, b = r.task_rows
    assert ops_of(r)["nanosleep"] == 10 and r.cpu_rows[0]["sys_ns"] == 20_000
    assert (a["run_ns"], a["sys_ns"]) == (510_001, 10_000)
    assert (b["run_ns"], b["sys_ns"]) == (510_001, 10_000)


def test_a_woken_cpu_switches_once_its_interrupt_is_done(tmp_path):
    # A SCHED_FIFO task (no timer slack) alone on one CPU sleeps 1 ms twice. At each expiry
    # the timer's interrupt (hrtimer_irq, 2 µs) wakes it (wakeup_local, 1 µs): resched_curr
    # only flags the idle CPU, which reaches its preemption point, the interrupt's exit, when
    # that work is done: it switches in 3 µs after sched_waking. Free, the switch comes at
    # the engine's next nanosecond.
    wl = {"global": {"default_policy": "SCHED_OTHER"},
          "tasks": {"t": {"policy": "SCHED_FIFO", "priority": 10, "loop": 2, "run": 100, "sleep": 1000}}}
    plat = one_cpu(tmp_path, tick=0, hrtimer_irq=2000, wakeup_local=1000)

    def latencies(sets):
        ev = schedlab.run(wl, plat, sets=sets).events
        pid = ev[ev.event == "sched_waking"].pid.iloc[0]
        waking = ev[(ev.event == "sched_waking") & (ev.pid == pid)].ts.tolist()
        switch = ev[(ev.event == "sched_switch") & (ev.other_pid == pid)].ts.tolist()[1:]
        return [b - a for a, b in zip(waking, switch)]

    assert latencies([]) == [3000, 3000]
    assert latencies(["overhead=off"]) == [1, 1]


def test_one_interrupts_wakeups_come_one_after_another(tmp_path):
    # Three SCHED_FIFO tasks on one CPU sleep to one expiry (their timers' first period, 1 ms
    # after the start they share). The
    # interrupt's `__hrtimer_run_queues` wakes them in turn, and each try_to_wake_up takes
    # the CPU's time (wakeup_local, 1 µs, nothing else charged): the second sched_waking comes
    # 1 µs after the first, the third 2 µs; free, 1 ns and 2 ns.
    task = {"policy": "SCHED_FIFO", "priority": 10, "loop": 1, "timer": {"ref": "unique", "period": 1000}}
    wl = {"global": {"default_policy": "SCHED_OTHER"}, "tasks": {k: dict(task) for k in "abc"}}
    plat = one_cpu(tmp_path, tick=0, wakeup_local=1000)

    def wakings(sets):
        ev = schedlab.run(wl, plat, sets=[*sets, *AT_ONCE]).events
        ts = ev[ev.event == "sched_waking"].ts.tolist()
        return [t - ts[0] for t in ts]

    assert wakings([]) == [0, 1000, 2000]
    assert wakings(["overhead=off"]) == [0, 1, 2]


def test_a_halted_cpu_runs_the_task_woken_there_once_it_is_out(tmp_path):
    # a, pinned to CPU 0, suspends; b, pinned to CPU 1, runs 1 ms and resumes it. CPU 0 is
    # idle (halted): the switch to a comes halt_exit_ns (20 us) after its waking, the kernel's
    # work being free; on the idealized machine, at the engine's next nanosecond.
    wl = {"global": {"default_policy": "SCHED_OTHER"}, "tasks": {
        "a": {"cpus": [0], "loop": 1, "suspend": "a"},
        "b": {"cpus": [1], "loop": 1, "run": 1000, "resume": "a"}}}
    path = tmp_path / "two.toml"
    # Two CPUs whose idle one takes 20 us to run again, the kernel's work free.
    path.write_text(platform(costs(FREE + ("tick", "migration")), "0-1", halt_exit_ns=20000))

    def latency(sets):
        ev = schedlab.run(wl, str(path), sets=[*sets, *AT_ONCE]).events
        a = ev[ev.event == "sched_waking"].pid.iloc[-1]
        waking = ev[(ev.event == "sched_waking") & (ev.pid == a)].ts.iloc[-1]
        switch = ev[(ev.event == "sched_switch") & (ev.other_pid == a)].ts.iloc[-1]
        return switch - waking

    assert latency([]) == 20_000
    assert latency(["overhead=off"]) == 1


def test_a_timer_interrupt_waits_for_a_halted_cpus_kick_and_slows_a_running_one(tmp_path):
    # A SCHED_FIFO task alone on a CPU that takes 20 µs to get going (and 50 µs to take an
    # interrupt while running), the kernel's work free, sleeps 1 ms from its start at 1 s:
    # the emulator's kick has the halted CPU take the
    # timer's interrupt 20 µs after the expiry (sched_waking at 1.001020 s), and its first
    # work after the exit holds the switch 20 µs more (1.001040 s). Idealized: both at once.
    wl = {"global": {"default_policy": "SCHED_OTHER"},
          "tasks": {"t": {"policy": "SCHED_FIFO", "priority": 10, "loop": 1,
                          "timer": {"ref": "unique", "period": 1000}}}}
    path = tmp_path / "halt.toml"
    path.write_text(platform(costs(FREE + ("tick",)), halt_exit_ns=20000, more="irq_entry_ns = 50000\n"))

    def waking_and_switch(sets):
        ev = schedlab.run(wl, str(path), sets=[*sets, *AT_ONCE]).events
        pid = ev[ev.event == "sched_waking"].pid.iloc[0]
        waking = ev[(ev.event == "sched_waking") & (ev.pid == pid)].ts.iloc[0]
        switch = ev[(ev.event == "sched_switch") & (ev.other_pid == pid)].ts.iloc[-1]
        return waking - 10**9, switch - 10**9

    assert waking_and_switch([]) == (1_020_000, 1_040_000)
    assert waking_and_switch(["overhead=off"]) == (1_000_000, 1_000_001)
    # Beside a fair hog the CPU is running when the timer expires: no kick, but it takes the
    # interrupt in irq_entry_ns (50 µs) before the task preempts the hog.
    wl["tasks"]["hog"] = {"loop": 1, "run": 5000}
    assert waking_and_switch([]) == (1_000_000, 1_050_000)


def test_a_timer_wakeup_on_an_idle_cpu_is_queued_after_the_interrupts_work(tmp_path):
    # Two CPUs whose timer interrupt costs 20 µs, the rest free. a (on CPU 0) and b (on
    # CPU 1, beside a hog there) run 100 µs every 10 ms from their common start at 1 s, b's
    # timer 10 µs behind a's. a's timer expires at 1.01 s and fires 50 µs later (a fair
    # task's slack): idle CPU 0 takes the interrupt, wakes a (sched_waking at 1.010050 s)
    # and queues it after the interrupt's work (sched_wakeup 20 µs later): until then CPU 0
    # is idle to CPU 1's placements, as the kernel's is until ttwu_do_activate. b's wakeup
    # on busy CPU 1 is queued at once. Idealized: a's too.
    path = tmp_path / "two.toml"
    path.write_text(platform(costs(FREE, hrtimer_irq=20_000), "0-1"))
    periodic = {"loop": -1, "run": 100, "timer": {"ref": "unique", "period": 10_000}}
    wl = {"global": {"default_policy": "SCHED_OTHER"},
          "tasks": {"a": {**periodic, "cpus": [0]}, "b": {**periodic, "cpus": [1], "delay": 10},
                    "h": {"cpus": [1], "delay": 1000, "loop": 1, "run": 100_000}}}

    def wakeups_at_10_ms(sets):
        ev = schedlab.run(wl, str(path), sets=[*sets, *AT_ONCE], duration_ns=15_000_000).events
        ev = ev[(ev.ts >= 1_010_000_000) & (ev.ts < 1_011_000_000)]
        at = {(e.event, e.other_pid if e.event == "sched_switch" else e.pid): e.ts - 10**9
              for e in ev.itertuples()}
        return {pid: tuple(at[(e, pid)] for e in ("sched_waking", "sched_wakeup", "sched_switch"))
                for pid in (1000, 1001)}  # a, b

    # b preempts the hog once CPU 1 is done with the interrupt (20 µs after it).
    assert wakeups_at_10_ms([]) == {1000: (10_050_000, 10_070_000, 10_070_001),
                                    1001: (10_060_000, 10_060_000, 10_080_000)}
    assert wakeups_at_10_ms(["overhead=off"]) == {1000: (10_050_000, 10_050_000, 10_050_001),
                                                  1001: (10_060_000, 10_060_000, 10_060_001)}


def test_costs_in_a_platform_file_are_checked(tmp_path, cli):
    path = tmp_path / "bad.toml"
    path.write_text(platform("tg_load_up_ns = 5"))
    wl = tmp_path / "w.json"
    wl.write_text('{"tasks": {"t": {"loop": 1, "run": 10}}}')
    r = cli("run", "--platform", str(path), str(wl))
    err = r.stderr.decode()
    assert r.returncode == 2 and "tg_load_up_ns" in err and "tg_load_down_ns" in err, err
    path.write_text(platform("tick_ns = 100000001"))
    r = cli("run", "--platform", str(path), str(wl))
    err = r.stderr.decode()
    assert r.returncode == 2 and "overhead.tick_ns" in err and "out of range" in err, err
    path.write_text(platform("", "0-1", halt_exit_ns=1000001))
    r = cli("run", "--platform", str(path), str(wl))
    err = r.stderr.decode()
    assert r.returncode == 2 and "halt_exit_ns = 1000001: at most 1000000" in err, err
    path.write_text(platform("", "0-1", halt_exit_ns="[30000, 20000]"))
    r = cli("run", "--platform", str(path), str(wl))
    err = r.stderr.decode()
    assert r.returncode == 2 and "halt_exit_ns: the quantiles must ascend" in err, err
    for line, msg in (("newidle_stall_ns = [100000001]", "newidle_stall_ns = 100000001: at most"),
                      ("irq_entry_ns = 1000001", "irq_entry_ns = 1000001: at most 1000000"),
                      ("start_newidle_cost_ns = [2, 1]", "start_newidle_cost_ns: the quantiles must")):
        path.write_text(platform("", "0-1").replace("[overhead]", f"{line}\n[overhead]"))
        r = cli("run", "--platform", str(path), str(wl))
        err = r.stderr.decode()
        assert r.returncode == 2 and msg in err and str(path) in err, err
    for scale, msg in (("0", "overhead.scale = 0: out of range"), ("-1.5", "overhead.scale = -1.5"),
                       ("101", "overhead.scale = 101"), ('"x"', 'line 5: invalid type: string "x"')):
        path.write_text(platform(f"scale = {scale}"))
        r = cli("run", "--platform", str(path), str(wl))
        err = r.stderr.decode()
        assert r.returncode == 2 and msg in err and "Traceback" not in err, err


def test_a_platform_scales_every_default_cost(tmp_path):
    # scale = 3 makes the default tick (610 ns) cost 1830 ns. 10 ms of work from t = 0 at
    # HZ=1000: the ticks at 1..10 ms take 10 · 1830 ns, so the work ends at 10.0183 ms, before
    # the next tick. An explicit cost is not scaled: the wakeup path is still free.
    wl = {"global": {"default_policy": "SCHED_OTHER"}, "tasks": {"t": {"loop": 1, "run": 10_000}}}
    path = tmp_path / "scaled.toml"
    path.write_text(platform("scale = 3\n" + costs(FREE)))
    r = schedlab.run(wl, str(path), sets=["overhead=on", "hz=1000", *AT_ONCE])
    t = r.task_rows[0]
    assert (t["run_ns"], t["sys_ns"]) == (10_018_300, 18_300)
    assert {o["op"]: o["sys_ns"] for o in r.op_rows if o["sys_ns"]} == {"tick": 18_300}


GROUPED = {
    "global": {"duration": 2, "default_policy": "SCHED_OTHER"},
    "tasks": {
        "a": {"instance": 3, "loop": -1, "run": 3000, "sleep": 2000, "taskgroup": "/a"},
        "b": {"instance": 4, "loop": -1, "run": 5000, "sleep": 1000, "taskgroup": "/b/c"},
        "r": {"instance": 2, "loop": -1, "run": 7000, "sleep": 3000},
    },
}


def test_lazy_and_eager_h_load_agree_on_every_value_and_differ_in_work():
    # The kernel's work free (overhead=off): the two ways' different costs move nothing.
    runs = {m: schedlab.run(GROUPED, "smp:4", sets=[f"fair.h_load={m}", "overhead=off"], idle_cgroups=50,
                            cgroups=["/a:weight=300"]) for m in ("lazy", "eager")}
    lazy, eager = runs["lazy"], runs["eager"]
    # The same h_load values: every decision that reads them (what the balancer moves) is the
    # same, so the runs are the same event for event.
    assert lazy.events.equals(eager.events) and lazy.signals.equals(eager.signals)
    ol, oe = ops_of(lazy), ops_of(eager)
    assert ol["migration"] == oe["migration"] > 0
    # Eager visits every group (root, /a, /b, /b/c and 50 idle ones) on each walk; lazy never
    # walks, it steps along the paths it needs (/a: one level; /b/c: two).
    assert oe["update_h_load"] > 0 and oe["tg_load_down"] == 54 * oe["update_h_load"]
    assert oe["h_load_step"] == 0
    assert ol["update_h_load"] == ol["tg_load_down"] == 0 and ol["h_load_step"] > 0


def test_the_balancing_cpu_does_the_eager_walk_of_its_sources_groups():
    # smp:2: two hogs on CPU 0, a 10 ms task on CPU 1 (tests/test_balance.py's newly idle pull).
    # At 10 ms CPU 1, newly idle, pulls a hog from CPU 0: before detaching it walks CPU 0's
    # groups (update_h_load(src_cpu) runs on this_cpu), the root and 10 idle ones, once.
    w = {"global": {"duration": 1}, "tasks": {
        "h": {"instance": 2, "loop": 1, "phases": {"p0": {"cpus": [0], "run": 1000},
                                                   "p1": {"cpus": [0, 1], "run": 100_000_000}}},
        "t": {"cpus": [1], "loop": 1, "run": 10_000}}}
    r = schedlab.run(w, "smp:2", sets=["fair.h_load=eager", *AT_ONCE], idle_cgroups=10)
    walks = {(o["cpu"], o["op"]): o["count"] for o in r.op_rows if o["op"] in ("update_h_load", "tg_load_down")}
    assert walks == {(0, "update_h_load"): 0, (0, "tg_load_down"): 0, (1, "update_h_load"): 1, (1, "tg_load_down"): 11}


def test_rtapp_main_thread_sets_itself_up_before_its_first_thread(tmp_path):
    # rt-app 1.0's main thread (pid 1) parses its JSON before it creates a thread (rtapp_init,
    # 50 µs here), then each pthread_create costs its clone (10 µs): it starts 1 ns after its
    # switch (the engine's nanosecond per scheduling event), and forks the threads 60 and 70 µs
    # later. Without the set-up's cost, 10 and 20 µs.
    w = {"global": {"duration": 1}, "tasks": {"h": {"instance": 2, "loop": 1, "run": 100}}}
    for init, first in ((50_000, 60_001), (0, 10_001)):
        plat = tmp_path / f"p{init}.toml"
        plat.write_text(platform(costs(FREE, rtapp_init=init, clone=10_000)))
        r = schedlab.run(w, str(plat), sets=["overhead=on"])
        ev = r.events
        start = ev[(ev.event == "sched_switch") & (ev.other_pid == 1)].ts.iloc[0]
        forks = ev[(ev.event == "sched_process_fork") & (ev.pid == 1) & (ev.ts > start)]
        assert list(forks.ts - start) == [first, first + 10_000]
        assert (ops_of(r)["rtapp_init"], ops_of(r)["clone"]) == (1, 2)


def test_a_niced_rtapp_thread_sets_its_nice_at_the_end_of_its_set_up(tmp_path):
    # rt-app's main thread forks b (nice 5) then a, and sleeps; each thread's set-up costs
    # 30 µs (rtapp_thread_init) before the start barrier. Under 6.12 b runs first: it starts
    # 1 ns after its switch, and at the end of its set-up lowers its own priority, which
    # reschedules its CPU with a waiting (prio_changed_fair): a takes it 1 ns later, 30 µs
    # and 2 ns after b's switch in. (The oracle's up-nice-2@7.3 record: b's priority falls
    # 82 µs into its set-up, and rt-app's main thread takes the CPU there.) Under 6.1 a runs
    # first, to the barrier, and b's nice finds nothing else queued: no reschedule, b goes
    # on to the barrier and wakes a.
    plat = tmp_path / "p.toml"
    plat.write_text(platform(costs(FREE, clone=10_000, rtapp_thread_init=30_000)))
    w = {"global": {"duration": 1}, "tasks": {"b": {"loop": 1, "priority": 5, "run": 1000},
                                              "a": {"loop": 1, "run": 1000}}}
    for kernel, first in (("6.12", "b-0"), ("6.1", "a-1")):
        ev = schedlab.run(w, str(plat), kernel=kernel, sets=["overhead=on"]).events
        sw = ev[(ev.event == "sched_switch") & ev.comm.isin(["rt-app", "a-1", "b-0"])]
        names = {1000: "b-0", 1001: "a-1", 1: "rt-app"}
        steps = [(names.get(o), s, t) for o, s, t in zip(sw.other_pid, sw.prev_state, sw.ts)]
        assert steps[0][:2] == (first, "S"), kernel  # the main thread's sleep
        if kernel == "6.12":
            assert steps[1][:2] == ("a-1", "R") and steps[1][2] - steps[0][2] == 30_002
        else:
            assert steps[1][:2] == ("b-0", "S")  # a at the barrier
            assert steps[2][1] != "R", steps[2]
