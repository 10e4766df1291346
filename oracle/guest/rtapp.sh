# The oracle's rt-app job: the case's cgroups (cgroup v1's cpu controller, the one rt-app
# 1.0's "taskgroup" uses), traced as the benchmark jobs are (trace.sh: schedstats on,
# trace-cmd recording into its ring buffer only, no reader beside the workload),
# /proc/schedstat and each group's cpu.stat at two marked instants.
# $JOB/params sets SNAPSHOT_FROM and SNAPSHOT_SPAN (s), and SNAPSHOT_DURING: 0 when the case
# compares no counter, so that the reads (and the shell's sleep between them) come after the
# workload and nothing but the workload runs during it.
set -u
. "$JOB/params"
. "$JOB/trace.sh"
# The domains' debugfs files (max_newidle_lb_cost) appear only in verbose mode since 6.3.
echo Y > /sys/kernel/debug/sched/verbose 2> /dev/null
if [ -s "$JOB/cgroups" ]; then
    mkdir -p /sys/fs/cgroup/cpu
    mount -t tmpfs cgroup /sys/fs/cgroup
    mkdir -p /sys/fs/cgroup/cpu
    mount -t cgroup -o cpu cpu /sys/fs/cgroup/cpu || exit 3
    while read -r path shares quota period; do
        g=/sys/fs/cgroup/cpu$path
        mkdir -p "$g"
        echo "$shares" > "$g/cpu.shares" || exit 3
        echo "$period" > "$g/cpu.cfs_period_us" || exit 3
        echo "$quota" > "$g/cpu.cfs_quota_us" || exit 3
    done < "$JOB/cgroups"
fi
trace_start
# Calibrate first, in a run of its own, so that the measured run (and its schedstat deltas)
# holds the workload only: rt-app's calibration takes seconds under emulation.
echo '{"tasks": {"calibrate": {"loop": 1, "run": 1000}}, "global": {"calibration": "CPU0", "duration": 1}}' > cal.json
pload=$(rt-app cal.json 2>&1 | sed -n 's/.*pLoad = \([0-9]*\)ns.*/\1/p')
[ -n "$pload" ] || exit 5
echo "pload=$pload" > calibration
sed "s/\"calibration\" *: *\"CPU0\"/\"calibration\": $pload/" "$JOB/workload.json" > workload.json
rm -f cal.json rt-app-calibrate-*.log
# /proc/schedstat at two instants inside the workload, each marked in the trace, read with
# bash's builtins (no process is forked then): the deltas cover the workload alone.
snapshot() {
    echo "schedstat $1" > /sys/kernel/tracing/trace_marker
    IFS= read -r -d '' s < /proc/schedstat
    printf '%s' "$s" > "schedstat.$1"
    if [ -s "$JOB/cgroups" ]; then
        while read -r path _; do
            IFS= read -r -d '' s < "/sys/fs/cgroup/cpu$path/cpu.stat"
            printf 'path %s\n%s' "$path" "$s"
        done < "$JOB/cgroups" > "cgroups.$1"
    fi
}
# Each CPU's lowest domain's max_newidle_lb_cost (ns): newly idle balancing runs only while
# avg_idle exceeds it, and under emulation it holds what the boot's passes cost.
newidle_cost() {
    for f in /sys/kernel/debug/sched/domains/cpu*/domain0/max_newidle_lb_cost; do
        [ -r "$f" ] && IFS= read -r v < "$f" && printf '%s ' "$v"
    done > "newidle_cost.$1"
}
newidle_cost start
rt-app workload.json > rt-app.log 2>&1 &
rtapp=$!
# rt-app 1.0 has no taskgroup: move each member thread (cgroup v1 takes thread ids) as soon as
# it appears, matched by its task's name ($JOB/members: "path task instances"). The shell does
# it at SCHED_FIFO, so that the workload's hogs do not delay it: at SCHED_OTHER the last
# thread joined its group about 90 ms into the run (cpumax-alone's first records).
if [ -s "$JOB/members" ]; then
    chrt -f -p 50 $$
    want=0
    while read -r _ _ n; do want=$((want + n)); done < "$JOB/members"
    moved=" " count=0
    for _ in $(seq 500); do
        for t in /proc/$rtapp/task/*; do
            tid=${t##*/}
            case "$moved" in *" $tid "*) continue ;; esac
            IFS= read -r comm < "$t/comm" 2>/dev/null || continue
            while read -r path task _; do
                if [ "$comm" = "${task:0:15}" ]; then
                    echo "$tid" > "/sys/fs/cgroup/cpu$path/tasks" && moved+="$tid " && count=$((count + 1))
                fi
            done < "$JOB/members"
        done
        [ "$count" -ge "$want" ] && break
        sleep 0.002
    done
    echo "moved=$moved" > members.moved
    chrt -o -p 0 $$
fi
if [ "$SNAPSHOT_DURING" = 1 ]; then
    sleep "$SNAPSHOT_FROM"
    snapshot before
    sleep "$SNAPSHOT_SPAN"
    snapshot after
    wait $rtapp
else
    wait $rtapp
    snapshot before
    snapshot after
fi
echo "rt-app=$?" > status
newidle_cost end
trace_stop
rm -f rt-app-*.log
