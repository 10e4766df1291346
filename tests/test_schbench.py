"""schbench as a generator and a command: latencies and rates on hand-derived cases, the real
tool's report format (schbench.c's `show_latencies` printf strings), its options, and bad
options refused with one clear message."""

import json
import re

import pytest

from schedlab.benchmarks import Schbench, _pretty_size
from schedlab.run import RunSpec

# schbench.c's show_latencies formats.
HEADER = "%s percentiles (%s) runtime %d (s) (%d total samples)\n"
LINE = "\t%s%2.1fth: %-10d (%d samples)\n"
MINMAX = "\t  min=%d, max=%d\n"

# -F 6: a matrix's side is sqrt(6·1024/3/8) = sqrt(256) = 16, 16³ = 4096 multiply-adds; -n 250
# of them at 1000 ps each: 250 · 4096 ns = 1,024,000 ns of work per request.
ONE_MS_OF_WORK = dict(cache_footprint=6, operations=250, matrix_ps=1000)


def simulate(bench: Schbench, platform: str):
    return RunSpec.of(bench.workload(), platform, sets=("overhead=off",)).run()


def rows(r, stat: str) -> dict:
    (row,) = [x for x in r.schbench_rows if x["stat"] == stat and x["last"]]
    return row


def test_a_lone_worker_s_request_is_its_sleep_with_slack_and_its_work():
    # One CPU, no cost model, one worker. Each request: the clock starts, usleep(100) (a
    # SCHED_OTHER thread's timer has 50 µs of slack, nothing expires it earlier), the lock is
    # free, 1024 µs of work: 1174 µs, give or take the gettimeofday µs it crosses (1174 or
    # 1175), both in the bucket [1172, 1176) whose value is 2^10 + 37·4 + 2 = 1174.
    # The main thread samples every sleep(1) + 50 µs = 1.00005 s and stops at 3.00015 s:
    # floor(3,000,150 / 1174) = 2555 requests done, and the one under way then finishes
    # before the worker sees `stopping`: 2556, "average rps" 2556 / 3 = 852.00.
    r = simulate(Schbench(threads=1, runtime=3, **ONE_MS_OF_WORK), "smp:1")
    req = rows(r, "request")
    assert (req["samples"], req["loops"], req["rps_now"]) == (2556, 2556, 852.0)
    assert 1174 <= req["min"] <= req["max"] <= 1175 and req["values"] == [1174] * 5
    # RPS: a sample of 0 at the start (0 requests over 0 µs is NaN: 0), then 851 or 852
    # requests per 1.00005 s round: 850 or 851 after truncation.
    rps = rows(r, "rps")
    assert rps["samples"] == 4 and rps["values"][0] == 0 and {rps["min"], rps["max"]} <= {850, 851}
    # The worker is woken at the message thread's instant, within its µs: counted only when
    # the wakeup crosses a µs boundary (0 µs is not a sample), then as 1 µs.
    wake = rows(r, "wakeup")
    assert wake["samples"] < 10 and wake["max"] <= 1


@pytest.mark.parametrize("sets, stretch, work_us", [
    # Its own quantiles, constant 1.5: 1024 µs · 1.5 = 1536 µs, not the platform's 1.019 too.
    ((), (1500,), 1536),
    # None of its own: qemu-tcg:1's platform stretch, 1.019: 1024 · 1.019 = 1043.5 µs.
    ((), None, 1043),
    # jitter.work=off: as calibrated, its own quantiles too.
    (("jitter.work=off",), (1500,), 1024),
])
def test_a_request_s_work_takes_its_own_stretch_in_place_of_the_platform_s(sets, stretch, work_us):
    # One vCPU, no cost model, no guest kernel threads, one worker in calibration mode (-C:
    # the sleep before the clock starts, no lock): a request is its work alone, 1024 µs at
    # 1000 ps a multiply-add, stretched; gettimeofday's µs make it that or one more.
    bench = Schbench(threads=1, runtime=1, calibrate=True, work_stretch=stretch, **ONE_MS_OF_WORK)
    r = RunSpec.of(bench.workload(), "qemu-tcg:1", sets=("overhead=off", "kthreads=off", *sets)).run()
    req = rows(r, "request")
    assert work_us <= req["min"] <= req["max"] <= work_us + 1


def test_rps_mode_queues_the_second_s_requests_in_one_burst():
    # -R 100, one worker on its own CPU, no sleep: each second the message thread queues 100
    # requests at once and sleeps out the second (1 s + 50 µs of slack, as the main thread's
    # rounds); the worker takes them and does each in 1024 µs (bucket [1024, 1028): 1026).
    # The main thread started first, so its stop at 3.00015 s comes before a fourth burst:
    # 300 requests, "average rps" 100.00; each round's sample 100 / 1.00005 s = 99.995 → 99.
    r = simulate(Schbench(threads=1, runtime=3, sleep_usec=0, rps=100, **ONE_MS_OF_WORK), "smp:2")
    req = rows(r, "request")
    assert (req["samples"], req["min"], req["max"], req["values"][1]) == (300, 1024, 1024, 1026)
    assert req["rps_now"] == 100.0
    assert rows(r, "rps")["values"][1:] == [99] * 4
    # Its one wakeup sample is the last: posted at `stopping` without a new wake time, it
    # counts from when it began to wait, after the third burst's 100 requests (102.4 ms past
    # 2.0001 s): about 0.9 s.
    wake = rows(r, "wakeup")
    assert wake["samples"] == 1 and 890_000 < wake["max"] < 900_000


def test_fewer_requests_than_message_threads_is_not_rps_mode():
    # schbench divides -R by the message threads: -R 1 -m 2 is 0 each, the plain mode. Its two
    # workers do a request every 1174 µs or so (above) for a second: hundreds, where one
    # request a second would give at most 2.
    r = simulate(Schbench(message_threads=2, threads=1, runtime=1, rps=1, **ONE_MS_OF_WORK), "smp:2")
    assert rows(r, "request")["loops"] > 800


def test_two_workers_contend_for_the_one_cpu_s_lock():
    # Two workers on one CPU. Without locking (-L) they share the CPU and its time goes to the
    # work alone: the workers run 1,024,000 ns per request done, plus at most the two requests
    # under way at the end. With the lock, a worker woken while the other holds the CPU's lock
    # mid-request spins (lock_this_cpu's trylock loop) until the holder runs again: CPU time
    # beyond the work, fewer requests, and requests that wait out the other's whole slice.
    base = dict(threads=2, runtime=2, **ONE_MS_OF_WORK)
    spin, share = (simulate(Schbench(**base, no_locking=nl), "smp:1") for nl in (False, True))

    def beyond_work(r) -> int:
        ran = sum(t["run_ns"] for t in r.task_rows if t["comm"].startswith("schbench-worker"))
        return ran - rows(r, "request")["loops"] * 1_024_000

    assert 0 <= beyond_work(share) <= 2 * 1_024_000
    assert beyond_work(spin) > 2 * 1_024_000  # more than sharing can account for
    a, b = rows(spin, "request"), rows(share, "request")
    assert a["loops"] < b["loops"]
    # sharing: a request is its sleep and its work (1174 µs), or waits for the other's work
    # too, never more: 150 + 2·1024 = 2198 µs (+1 for the clock's truncation)
    assert b["min"] >= 1174 and b["max"] <= 2199
    assert a["min"] >= 1174 and a["max"] > 2199


# -p 64000 at 1000 ps a 64-byte line: each memset of the transfer is 1000 lines, 1 µs.
ONE_US_MEMSETS = dict(pipe=64_000, memset_ps=1000)


@pytest.mark.parametrize("threads, rate", [(1, 500_000), (2, 250_000)])
def test_a_pipe_test_s_loop_is_two_memsets(threads, rate):
    # -p on one CPU, no cost model: a worker's loop is its memset before it posts the message
    # thread and the message thread's memset of its buffer before posting it back, 1 µs each,
    # and nothing else (no sleep, no work). Some thread always has a memset to do (the message
    # thread waits only while a worker writes), so the CPU's 3 s are all memsets, two a loop:
    # 1.5 million loops. "avg worker transfer" divides them by the workers' run times summed:
    # one worker, 3 s: 500,000 a second; two, 6 s: 250,000. Less the engine's own: it takes a
    # switch that a scheduling event asks for 1 ns after that event (its order of events in
    # an instant), and a loop has two switches: a loop is 2000 to 2004 ns.
    r = simulate(Schbench(threads=threads, runtime=3, **ONE_US_MEMSETS), "smp:1")
    w = rows(r, "wakeup")
    assert rate * 2000 / 2004 <= w["loops"] * 1e6 / w["worker_runtime_us"] <= rate
    assert 3_000_000 * threads <= w["worker_runtime_us"] <= 3_000_200 * threads
    if threads == 1:
        # the waker posts, then waits: a wakeup is a sample (1 µs) only where its ns cross a µs
        assert w["max"] == 1 and w["samples"] < w["loops"] / 100
    else:
        # the first posted waits out the message thread's memset of the other's buffer (1 µs);
        # at most that and the other worker's memset too: 2 µs, 3 with the µs they cross
        assert w["values"][1] == 1 and w["max"] <= 3 and w["samples"] > w["loops"] * 0.99


def test_a_pipe_test_reports_wakeups_and_transfers(cli, tmp_path):
    """schbench.c's pipe-mode report: the wakeup latencies with the 20th percentile, then
    `avg worker transfer: %.2f ops/sec %.2f%s/s`, the bytes a second cut to whole bytes and
    divided by 1024 per unit (`pretty_size`); no interval reports, and -j's json has the
    wakeup latencies alone."""
    path = tmp_path / "sb.json"
    out = cli("schbench", "-t", "2", "-r", "2", "-i", "1", "-p", "64000", "--memset-ps", "1000", "-j", str(path),
              "--platform", "smp:2")
    assert out.returncode == 0, out.stderr.decode()
    text = out.stdout.decode()
    assert text.count("Wakeup Latencies percentiles") == 1 and "Request Latencies" not in text
    m = re.search(r"\(usec\) runtime 2 \(s\) \((\d+) total samples\)\n\t  20\.0th: \d+ +\(\d+ samples\)\n"
                  r"\t  50\.0th: .*\n\t  90\.0th: .*\n\t\* 99\.0th: .*\n\t  99\.9th: .*\n\t  min=\d+, max=\d+\n"
                  r"avg worker transfer: (\d+\.\d\d) ops/sec (\d+\.\d\d)(B|KB|MB|GB)/s\n$", text)
    assert m and int(m[1]) > 0, text
    # the bytes: the loops a second times 64000, in pretty_size's unit (ops/sec to the cent)
    size, unit = _pretty_size(float(m[2]) * 64000)
    assert m[4] == unit and float(m[3]) == pytest.approx(size, abs=0.01)
    j = json.loads(path.read_text())["int"]
    assert sorted(j) == sorted(["time", "runtime", "wakeup_latency_min", "wakeup_latency_max"]
                               + [f"wakeup_latency_pct{p}" for p in ("20.0", "50.0", "90.0", "99.0", "99.9")])
    assert json.loads(path.read_text())["normal"]["cmdline"].startswith("schbench -t 2 -r 2 -i 1 -p 64000 -j ")


def test_a_pipe_test_over_a_mib_is_cut_as_schbench_cuts_it(cli):
    out = cli("schbench", "-t", "1", "-r", "1", "-p", "2000000", "-j", "-", "--platform", "smp:1")
    assert out.returncode == 0, out.stderr.decode()
    err = out.stderr.decode()
    assert err.startswith("pipe size too big, using 1048576\n")
    assert json.loads(out.stdout.decode())["normal"]["cmdline"] == "schbench -t 1 -r 1 -p 1048576 -j -"


def test_pretty_size_divides_by_1024_up_to_eb():
    assert _pretty_size(1023) == (1023, "B")
    assert _pretty_size(1536) == (1.5, "KB")
    assert _pretty_size(3 * 2**30) == (3.0, "GB")
    assert _pretty_size(2**70) == (1024.0, "EB")  # no unit past EB


def test_reports_print_show_latencies_formats(cli):
    out = cli("schbench", "-t", "1", "-r", "3", "-F", "6", "-n", "250", "--matrix-ps", "1000", "-i", "2",
              "--platform", "smp:1", "--set", "overhead=off")
    text = out.stdout.decode()
    assert out.returncode == 0, out.stderr.decode()
    # One interval report (at 2 s: runtime_delta ≥ -i), then the last.
    assert text.count("Wakeup Latencies percentiles") == 2
    last = text[text.rindex("Wakeup Latencies"):]
    m = re.search(r"Request Latencies percentiles \(usec\) runtime 3 \(s\) \((\d+) total samples\)\n", last)
    n = int(m[1])
    # Every sample is in one bucket, so the 20th percentile (computed, not printed) takes
    # them all and each printed one counts 0 since the one before (calc_percentiles).
    expect = (HEADER % ("Request Latencies", "usec", 3, n)
              + "".join(LINE % ("* " if p == 99 else "  ", p, 1174, 0) for p in (50, 90, 99, 99.9)))
    assert expect in last
    assert re.search(r"\n\t  min=117[45], max=117[45]\nRPS percentiles \(requests\) runtime 3 \(s\) \(4 total", last)
    # RPS prints the 20th (the start's 0 sample), the 50th (starred) and the 90th.
    assert LINE % ("  ", 20.0, 0, 1) in last
    assert re.search(r"\t\* 50\.0th: 85[01]        \(\d samples\)\n\t  90\.0th: 85[01]        \(", last)
    assert last.endswith(f"average rps: {n / 3:.2f}\nsched delay: message 0 (usec) worker 0 (usec)\n")
    first = text[:text.rindex("Wakeup Latencies")]
    assert re.search(r"sched delay: message \d+ \(usec\) worker \d+ \(usec\)\ncurrent rps: \d+\.\d\d\n$", first)


def test_json_output_is_write_json_s_of_the_last_report(cli, tmp_path):
    """-j FILE -J NAME: schbench.c's write_json_header, write_json_stats (each histogram's
    plist percentiles, min and max) and write_json_footer, byte for byte in their layout; its
    figures are the last report's. -j -: the json alone on standard output, the report on
    stderr, as schbench prints it."""
    path = tmp_path / "sb.json"
    out = cli("schbench", "-t", "1", "-r", "2", "-i", "1", "-j", str(path), "-J", 'job "1"',
              "--platform", "smp:1", "--set", "overhead=off")
    assert out.returncode == 0, out.stderr.decode()
    raw = path.read_text()
    assert raw.startswith('{"normal": {"version": "6.12","jobname": "job \\"1\\"","hostname": "smp:1",'
                          '"sched_ext": "disabled","cmdline": "schbench -t 1 -r 2 -i 1 -j ')
    assert re.search(r'"int": \{"time": 0, "wakeup_latency_pct20\.0": \d+, "wakeup_latency_pct50\.0": \d+, '
                     r'"wakeup_latency_pct90\.0": \d+, "wakeup_latency_pct99\.0": \d+, '
                     r'"wakeup_latency_pct99\.9": \d+, "wakeup_latency_min": \d+,"wakeup_latency_max": \d+, '
                     r'"request_latency_pct20\.0": ', raw)
    assert raw.endswith(', "runtime": 2}}')
    j = json.loads(raw)["int"]
    last = out.stdout.decode()
    last = last[last.rindex("Wakeup Latencies"):]
    for label, name in (("wakeup_latency", "Wakeup Latencies"), ("request_latency", "Request Latencies")):
        part = last[last.index(name):]
        assert f"* 99.0th: {j[label + '_pct99.0']:<10d}" in part
        assert f"min={j[label + '_min']}, max={j[label + '_max']}" in part
    out = cli("schbench", "-t", "1", "-r", "1", "-j", "-", "--platform", "smp:1", "--set", "overhead=off")
    assert json.loads(out.stdout.decode())["normal"]["cmdline"] == "schbench -t 1 -r 1 -j -"
    assert "Wakeup Latencies percentiles" in out.stderr.decode()


@pytest.mark.parametrize("platform, cpus", [("smp:1", 1), ("smp:2", 2)])
def test_auto_rps_scales_the_rate_to_the_busy_target(platform, cpus):
    # -A 50, eight workers, no lock, no sleep, no cost model: the machine is busy only with
    # the requests, 1.024 ms each, so 50% of `cpus` CPUs is 500·cpus ms a second: a rate of
    # 500·cpus / 1.024 = 488.3 a second per CPU. From -A's 10 a second the rate triples
    # each second while under a third of it, then closes 1/4 and 1/8 of the gap; in 30 s it
    # ends within 3% of that. The RPS histogram starts over when the target is first
    # reached (delta within 5%), so it has fewer samples than seconds.
    r = simulate(Schbench(threads=8, runtime=30, sleep_usec=0, no_locking=True, auto_rps=50,
                          **ONE_MS_OF_WORK), platform)
    rps = rows(r, "rps")
    assert abs(rps["rps_goal"] - 488.3 * cpus) < 0.03 * 488.3 * cpus, rps["rps_goal"]
    assert 0 < rps["samples"] < 30


def test_auto_rps_ends_its_report_with_the_rate_it_reached(cli):
    # -A 100 from 10 a second: the main thread reads /proc/stat at 0 (the counters only),
    # 1, 2 and 3 s (the last at the runtime's end). Each second's window holds at most two
    # bursts' requests of 1.024 ms (the one before, posted at a rate it has since tripled at
    # most, and its own), so it is at most 2·1.024·rate/10 % busy: 2.0%, 6.1% and 18.4% at
    # rates 10, 30 and 90, each under a third of the target, so each read triples the rate:
    # 10 → 30 → 90 → 270.
    out = cli("schbench", "-A", "100", "-t", "8", "-L", "-s", "0", "-r", "3", "-F", "6", "-n", "250",
              "--matrix-ps", "1000", "--platform", "smp:1", "--set", "overhead=off")
    text = out.stdout.decode()
    assert text.endswith("final rps goal was 270\nsched delay: message 0 (usec) worker 0 (usec)\n"), text
    assert "average rps" not in text


def test_worker_count_and_pinning_lines_are_the_tool_s(cli):
    # No -t: (CPUs + message threads − 1) / message threads = (4 + 1) / 2 = 2 per message
    # thread; -M auto puts message thread i on CPU i.
    out = cli("schbench", "-m", "2", "-r", "1", "-M", "auto", "--platform", "smp:4")
    text = out.stdout.decode()
    assert text.startswith("auto pinning message and worker threads\nsetting worker threads to 2\n"
                           "Pinning to message thread index 0 cpu 0\nPinning to message thread index 1 cpu 1\n")


@pytest.mark.parametrize("args, msg", [
    (["-r", "1", "-p", "-1"], "argument -p/--pipe: '-1' is not a whole number"),
    (["-r", "1", "-A", "101"], "schbench: -A/--auto-rps: 101 is out of range: 0 to 100"),
    (["-r", "0"], "schbench: -r/--runtime 0 runs for ever"),
    (["-r", "1", "--split", "101"], "schbench: --split: 101 is out of range: 0 to 100"),
    (["-r", "1", "-W", "7"], "schbench: -W/--worker-cpus: CPU 7 is outside the platform smp:2 (CPUs 0-1)"),
    (["-r", "1", "-M", "0-x"], "-M/--message-cpus: '0-x' is not a CPU list"),
    (["-r", "1", "-m", "0"], "schbench: -m/--message-threads: 0 is out of range: 1 to"),
    (["-r", "x"], "argument -r/--runtime: 'x' is not a whole number"),
    (["-r", "1", "-J", "a"], "schbench: -J/--jobname names the job of the -j/--json output: give -j FILE"),
    (["-r", "1", "-j", "s.json", "--summary", "s.json"], "the json output"),
    (["-r", "1", "--work-stretch", "1000,900"], "schbench: --work-stretch: work_stretch: the quantiles must ascend"),
    (["-r", "1", "--work-stretch", "100"],
     "schbench: --work-stretch: work_stretch: 100 out of range, 500 to 4000 (1/1000 of the calibration)"),
    (["-r", "1", "--work-stretch", "1000,"], "argument --work-stretch: '' is not a whole number"),
])
def test_bad_schbench_options_name_the_option(cli, args, msg):
    out = cli("schbench", *args, "--platform", "smp:2")
    err = out.stderr.decode()
    assert out.returncode == 2 and msg in err and not out.stdout and "Traceback" not in err, err


@pytest.mark.parametrize("options, msg", [
    ({"bogus": 1}, "unknown schbench option"),
    ({"pipe": 1048577}, "generators.schbench.pipe (line 1, column 52): 1048577 is out of range: 0 to 1048576"),
    ({"work_stretch": 1000}, "generators.schbench.work_stretch (line 1, column 60): expected an array of quantiles"),
    ({"work_stretch": [1000] * 101},
     "generators.schbench.work_stretch (line 1, column 60): work_stretch: 101 quantiles, at most 100"),
])
def test_bad_run_file_options_get_one_clear_message(cli, tmp_path, options, msg):
    p = tmp_path / "g.json"
    p.write_text(json.dumps({"generators": {"schbench": {"runtime": 1, **options}}}))
    out = cli("run", str(p), "--platform", "smp:2")
    err = out.stderr.decode()
    assert out.returncode == 2 and msg in err and "Traceback" not in err, err


def test_help_offers_the_real_tools_options(cli):
    # schbench.c's print_usage names these.
    text = cli("schbench", "--help").stdout.decode()
    for opt in ("-C", "--calibrate", "-L", "--no-locking", "-m", "--message-threads", "-M", "--message-cpus",
                "-W", "--worker-cpus", "-t", "--threads", "-r", "--runtime", "-F", "--cache_footprint", "-n",
                "--operations", "-s", "--sleep_usec", "-A", "--auto-rps", "-p", "--pipe", "-R", "--rps", "-w",
                "--warmuptime", "-i", "--intervaltime", "-z", "--zerotime", "-j", "--json", "-J", "--jobname",
                "--split"):
        assert re.search(rf"(^|[\s,\[]){re.escape(opt)}\b", text), opt


def test_summary_round_trips_the_schbench_table(reload):
    r = simulate(Schbench(threads=2, runtime=1, **ONE_MS_OF_WORK), "smp:2")
    assert reload(r).schbench_rows == r.schbench_rows


def test_the_conformance_suite_reads_the_real_tool_s_report():
    from schedlab.conformance import measure

    # The last report of `schbench -C -m 1 -t 1 -r 2 -s 0` (schbench 24e32b8, gcc -O2, an
    # x86-64 host): its request latencies are the work loop's alone.
    report = ("Wakeup Latencies percentiles (usec) runtime 2 (s) (917 total samples)\n"
              "\t  50.0th: 35         (247 samples)\n\t  90.0th: 43         (372 samples)\n"
              "\t* 99.0th: 86         (77 samples)\n\t  99.9th: 425        (9 samples)\n"
              "\t  min=1, max=425\n"
              "Request Latencies percentiles (usec) runtime 2 (s) (917 total samples)\n"
              "\t  50.0th: 2092       (353 samples)\n\t  90.0th: 2132       (294 samples)\n"
              "\t* 99.0th: 2188       (72 samples)\n\t  99.9th: 2620       (9 samples)\n"
              "\t  min=1937, max=2618\n"
              "RPS percentiles (requests) runtime 2 (s) (3 total samples)\n"
              "\t  20.0th: 0          (1 samples)\n\t* 50.0th: 454        (1 samples)\n"
              "\t  90.0th: 460        (1 samples)\n\t  min=454, max=460\n"
              "average rps: 458.50\nsched delay: message 0 (usec) worker 0 (usec)\n")
    assert measure.schbench(report) == {"schbench": {"wakeup_us": [35, 43, 86], "request_us": [2092, 2132, 2188],
                                                     "rps": 458.5}}
    # 2092 µs over 5 · 104³ = 5,624,320 multiply-adds: 371.96 ps each.
    assert measure.schbench_matrix_ps(report) == pytest.approx(371.96, abs=0.01)
    # The work's stretch with a worker per CPU, against that median of one worker's (2092
    # µs): a report of min 1883, p50 2092, p90 2301, p99 2510, p99.9 2720 and max 2929 µs.
    # Quantile k at (k + 1/2)/100, linear between those at 0, .5, .9, .99, .999 and 1, in
    # 1/1000 of 2092: k 0 at .005, 1883 + 209·.01 = 1885.09: 901.1; k 50 at .505, 2092 +
    # 209·(.005/.4) = 2094.61: 1001.2; k 90 at .905, 2301 + 209·(.005/.09) = 2312.61: 1105.5
    # (1105); k 99 at .995, 2510 + 210·(.005/.009) = 2626.67: 1255.6.
    every = ("Request Latencies percentiles (usec) runtime 5 (s) (684 total samples)\n"
             "\t  50.0th: 2092       (198 samples)\n\t  90.0th: 2301       (269 samples)\n"
             "\t* 99.0th: 2510       (56 samples)\n\t  99.9th: 2720       (6 samples)\n"
             "\t  min=1883, max=2929\nRPS percentiles (requests) runtime 5 (s) (6 total samples)\n")
    q = measure.schbench_work_stretch(report, every)
    assert len(q) == 100 and (q[0], q[50], q[90], q[99]) == (901, 1001, 1105, 1256) and q == sorted(q)
    with pytest.raises(ValueError, match="no request latencies"):
        measure.schbench_work_stretch(report, "setting worker threads to 2\n")
    with pytest.raises(ValueError, match="no last report"):
        measure.schbench("setting worker threads to 2\n")
    # A pipe test's (schbench -p 1048576 -m 1 -t 1 -r 3, one CPU of that host): its wakeups from
    # the 20th percentile and its transfers a second.
    pipe = ("Wakeup Latencies percentiles (usec) runtime 3 (s) (175811 total samples)\n"
            "\t  20.0th: 2          (142809 samples)\n\t  50.0th: 2          (0 samples)\n"
            "\t  90.0th: 3          (32380 samples)\n\t* 99.0th: 3          (0 samples)\n"
            "\t  99.9th: 20         (452 samples)\n\t  min=1, max=1434\n"
            "avg worker transfer: 58600.02 ops/sec 57.23GB/s\n")
    assert measure.schbench(pipe) == {"schbench": {"wakeup_us": [2, 3, 3], "transfers": 58600.02}}
    # -p 1048576 against -p 1 (58,600.02 and 268,648.60 loops a second): 13.34 µs a loop
    # apart, over 2 · 2^20 / 64 = 32,768 lines: 407.2 ps each.
    small = pipe.replace("58600.02", "268648.60")
    assert measure.schbench_memset_ps(pipe, small) == pytest.approx(407.2, abs=0.1)


def _posts_preempted(trace_text: str) -> tuple[int, int]:
    """Of a trace's posts of the message thread by a worker (its `sched_waking`), how many
    end with the worker switched out runnable (preempted at its FUTEX_WAKE's return, before
    its FUTEX_WAIT), and how many in all."""
    from schedlab.conformance import ftrace

    preempted = posts = 0
    waker = None
    for e in ftrace.events(trace_text):
        f = e.fields
        if e.name == "sched_waking" and f["comm"].startswith("schbench-msg") and e.pid:
            waker, posts = str(e.pid), posts + 1
        elif e.name == "sched_switch" and f["prev_pid"] == waker:
            preempted += f["prev_state"] == "R"
            waker = None
    return preempted, posts


@pytest.mark.parametrize("kernel", ["6.12", "7.3"])
def test_a_worker_posting_the_message_thread_is_preempted_at_its_return(kernel, tmp_path):
    # schbench-1 on one vCPU (the conformance case, its work's speed from the record): a worker
    # done with its request posts the message thread (FUTEX_WAKE) and then waits (FUTEX_WAIT).
    # The woken thread, asleep for the whole request, preempts it at the first call's return
    # to user space whenever EEVDF picks it: in the real kernel's recorded run 39 of 57 posts
    # under 6.12 and 51 of 58 under 7.3 end with the worker switched out runnable.
    import gzip
    from pathlib import Path

    from schedlab import run
    from schedlab.conformance import suite

    root = Path(__file__).parent / "conformance"
    case = {c.name: c for c in suite.cases(root / "cases.toml")}[f"schbench-1@{kernel}"]
    record = suite.load_record(suite.record_path(case, root / "records"))
    with gzip.open(root / "records" / f"{case.name}.trace.txt.gz", "rt") as f:
        k_pre, k_posts = _posts_preempted(f.read())
    assert k_posts > 50 and k_pre / k_posts > 0.6  # the record, as quoted above
    trace = tmp_path / "trace.txt"
    run(suite._calibrated(case.bench, record).workload(), "qemu-tcg:1", kernel=kernel,
        trace=trace, frames=False)
    pre, posts = _posts_preempted(trace.read_text())
    assert posts > 50 and abs(pre / posts - k_pre / k_posts) < 0.15


def test_a_case_takes_its_records_calibrations():
    # Three runs' calibrations: matrix_ps 370, 380 and 390 (mean 380); their work stretches'
    # medians quantile by quantile: 1005 of 1000, 1010, 1005; 1100 of 1100, 1600, 1090 (one
    # calibration's tail does not move it). A record without stretches (one vCPU, a pipe
    # test) leaves the platform's.
    from schedlab.conformance import suite

    runs = [{"matrix_ps": 370, "work_stretch": [1000, 1100]}, {"matrix_ps": 380, "work_stretch": [1010, 1600]},
            {"matrix_ps": 390, "work_stretch": [1005, 1090]}]
    bench = suite._calibrated(Schbench(runtime=1), {"runs": runs})
    assert (bench.matrix_ps, bench.work_stretch) == (380, (1005, 1100))
    bench = suite._calibrated(Schbench(runtime=1), {"runs": [{"matrix_ps": 370}]})
    assert (bench.matrix_ps, bench.work_stretch) == (370, None)
