# The oracle's perf bench job: schedstats on, trace-cmd recording into its ring buffer only,
# `perf bench sched ARGS` ($JOB/params: PERF_ARGS) between two marked /proc/schedstat reads.
set -u
. "$JOB/params"
echo 1 > /proc/sys/kernel/sched_schedstats
events=()
for e in sched_switch sched_wakeup sched_waking sched_wakeup_new sched_migrate_task \
         sched_process_fork sched_process_exit; do events+=(-e "sched:$e"); done
trace-cmd start -C mono -b 32768 "${events[@]}" -e task:task_rename > /dev/null || exit 4
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
trace-cmd stop
grep -h overrun /sys/kernel/tracing/per_cpu/cpu*/stats > trace.overruns
trace-cmd extract -o trace.dat > /dev/null 2>&1
