# The oracle's schbench job: first `schbench -C` alone, untraced, which times the work loop
# (calibrate.log: its request latencies are the work's alone, at the guest's speed), and for a
# pipe test (-p) `schbench -p 1048576` and `-p 1` with both threads on CPU 0, whose loops a
# second differ by two memsets of 1 MiB (calibrate-pipe.log, calibrate-pipe-1.log); then
# `schbench ARGS` ($JOB/params: SCHBENCH_ARGS) traced (trace.sh), its report in schbench.log.
set -u
. "$JOB/params"
. "$JOB/trace.sh"
cp "$JOB/schbench" ./schbench-bin && chmod +x ./schbench-bin
./schbench-bin -C -m 1 -t 1 -r 2 -s 0 > calibrate.log 2>&1 || { echo "schbench=calibrate" > status; exit 0; }
case " $SCHBENCH_ARGS " in
*" -p "*)
    for bytes in 1048576 1; do
        log=calibrate-pipe.log
        [ "$bytes" = 1 ] && log=calibrate-pipe-1.log
        ./schbench-bin -p "$bytes" -m 1 -t 1 -M 0 -W 0 -r 2 > "$log" 2>&1 || { echo "schbench=calibrate-pipe" > status; exit 0; }
    done ;;
esac
trace_start
# shellcheck disable=SC2086 # SCHBENCH_ARGS is a list of words
./schbench-bin $SCHBENCH_ARGS > schbench.log 2>&1
echo "schbench=$?" > status
trace_stop
