# The oracle's perf bench job: `perf bench sched ARGS` ($JOB/params: PERF_ARGS) traced
# (trace.sh), between two marked /proc/schedstat reads.
set -u
. "$JOB/params"
. "$JOB/trace.sh"
trace_start
snapshot() {
    echo "schedstat $1" > /sys/kernel/tracing/trace_marker
    IFS= read -r -d '' s < /proc/schedstat
    printf '%s' "$s" > "schedstat.$1"
}
snapshot before
# shellcheck disable=SC2086 # PERF_ARGS is a list of words
perf bench sched $PERF_ARGS > perf.log 2>&1
echo "perf=$?" > status
snapshot after
trace_stop
