"""The cache-affinity model (--set cache=on): a thread whose working set went cold stalls
while the platform's caches refill (crates/schedlab/src/sim/cache.rs; docs/cache.md)."""

import schedlab

ONE_CPU = """
name = "one"
description = "one CPU at 1 GHz, a 64 KiB private cache refilled at 1 us per KiB"
[cache]
{cache}
[[freq_domain]]
name = "c"
cpus = "0"
capacity = 1024
opps = [{{ khz = 1000000 }}]
"""
CACHE = 'private = "64K"\nmemory_ns_per_kib = 1000'
# Three periods of 1 ms of work touching a 64 KiB buffer, then 10 ms of sleep.
WORKLOAD = {"global": {"default_policy": "SCHED_OTHER", "mem_buffer_size": 65536},
            "tasks": {"t": {"loop": 3, "mem": 1024, "run": 1000, "sleep": 10000}}}


def test_a_cold_working_set_refills_at_each_wakeup(tmp_path):
    # Working set: mem_buffer_size, 64 KiB, all of it in the private level. After 10 ms away
    # (20 half-lives of 0.5 ms) nothing is left: each of its 3 stints of work refills 64 KiB
    # from memory at 1000 ns per KiB = 64 us. The fourth stint (after the last sleep) exits
    # 1 ns after it starts (the engine's nanosecond per scheduling event): that 1 ns, which
    # the run without the model spends too, is refill; the rest is undone. The other stalls
    # lengthen the run time by exactly what they cost, and are not system time.
    path = tmp_path / "one.toml"
    path.write_text(ONE_CPU.format(cache=CACHE))
    # The kernel's own work free (overhead=off): only the cache model takes time.
    off = schedlab.run(WORKLOAD, str(path), sets=["overhead=off"]).task_rows[0]
    on = schedlab.run(WORKLOAD, str(path), sets=["cache=on", "overhead=off"]).task_rows[0]
    assert (off["refill_ns"], on["refill_ns"]) == (0, 3 * 64_000 + 1)
    assert on["run_ns"] - off["run_ns"] == 3 * 64_000
    assert on["sys_ns"] == 0


def test_bad_cache_descriptions_exit_2_naming_the_key(tmp_path, cli):
    path = tmp_path / "one.toml"
    wl = tmp_path / "w.json"
    wl.write_text('{"tasks": {"t": {"loop": 1, "run": 10}}}')
    for cache, msg in (('private = "big"\nmemory_ns_per_kib = 10', 'cache.private = "big": not a size'),
                       ('private = "8G"\nmemory_ns_per_kib = 10', "out of range"),
                       ('private = "1M"\nmemory_ns_per_kib = 0', "cache.memory_ns_per_kib = 0: out of range"),
                       ('private = "1M"\nllc = "8M"\nmemory_ns_per_kib = 10', "cache.llc needs llc_ns_per_kib"),
                       ('private = "1M"\nprivate_shared_by = "node"\nmemory_ns_per_kib = 10',
                        'cache.private_shared_by = "node"')):
        path.write_text(ONE_CPU.format(cache=cache))
        r = cli("run", "--platform", str(path), str(wl))
        err = r.stderr.decode()
        assert r.returncode == 2 and msg in err and "Traceback" not in err, err
    r = cli("run", "--platform", "smp:2", "--set", "cache=on", str(wl))
    err = r.stderr.decode()
    assert r.returncode == 2 and "smp:2 describes no caches" in err, err
