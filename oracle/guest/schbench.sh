# The oracle's schbench job: first `schbench -C` alone, untraced, which times the work loop
# (calibrate.log: its request latencies are the work's alone, at the guest's speed); then
# `schbench ARGS` ($JOB/params: SCHBENCH_ARGS) traced (trace.sh), its report in schbench.log.
set -u
. "$JOB/params"
. "$JOB/trace.sh"
cp "$JOB/schbench" ./schbench-bin && chmod +x ./schbench-bin
./schbench-bin -C -m 1 -t 1 -r 2 -s 0 > calibrate.log 2>&1 || { echo "schbench=calibrate" > status; exit 0; }
trace_start
# shellcheck disable=SC2086 # SCHBENCH_ARGS is a list of words
./schbench-bin $SCHBENCH_ARGS > schbench.log 2>&1
echo "schbench=$?" > status
trace_stop
