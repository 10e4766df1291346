# The oracle's schbench job: first `schbench -C` alone, untraced, which times the work loop
# (calibrate.log: its request latencies are the work's alone, at the guest's speed); for a
# pipe test (-p) `schbench -p 1048576` and `-p 1` with both threads on CPU 0, whose loops a
# second differ by two memsets of 1 MiB (calibrate-pipe.log, calibrate-pipe-1.log), and for
# any other on more than one CPU `schbench -C` again with a worker per CPU
# (calibrate-all.log: the work's spread when every vCPU works); then
# `schbench ARGS` ($JOB/params: SCHBENCH_ARGS) traced (trace.sh), its report in schbench.log.
set -u
. "$JOB/params"
. "$JOB/trace.sh"
cp "$JOB/schbench" ./schbench-bin && chmod +x ./schbench-bin
# schbench LOG ARGS: a run into LOG, its status. At exit, schbench reads each thread's
# /proc/TID/schedstat for its "sched delay" line, after its last report: a thread that
# has just exited leaves the file empty, and it exits 1 (read_sched_delay) with its report
# whole.
schbench() {
    log=$1
    shift
    ./schbench-bin "$@" > "$log" 2>&1 && return 0
    rc=$?
    [ "$rc" = 1 ] && tail -n 1 "$log" | grep -q '^Failed to parse /proc/[0-9]*/schedstat$' && return 0
    return "$rc"
}
schbench calibrate.log -C -m 1 -t 1 -r 2 -s 0 || { echo "schbench=calibrate" > status; exit 0; }
case " $SCHBENCH_ARGS " in
*" -p "*)
    for bytes in 1048576 1; do
        log=calibrate-pipe.log
        [ "$bytes" = 1 ] && log=calibrate-pipe-1.log
        schbench "$log" -p "$bytes" -m 1 -t 1 -M 0 -W 0 -r 2 || { echo "schbench=calibrate-pipe" > status; exit 0; }
    done ;;
*)
    n=$(nproc)
    if [ "$n" -gt 1 ]; then
        schbench calibrate-all.log -C -m 1 -t "$n" -r 5 -s 0 || { echo "schbench=calibrate-all" > status; exit 0; }
    fi ;;
esac
trace_start
# shellcheck disable=SC2086 # SCHBENCH_ARGS is a list of words
schbench schbench.log $SCHBENCH_ARGS
echo "schbench=$?" > status
trace_stop
