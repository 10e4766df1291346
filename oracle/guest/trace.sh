# The oracle's tracing for a benchmark job (sourced): schedstats on, trace-cmd recording the
# scheduler's events into its ring buffer only (mono clock, no reader), then extracted.
trace_start() {
    echo 1 > /proc/sys/kernel/sched_schedstats
    local events=() e
    for e in sched_switch sched_wakeup sched_waking sched_wakeup_new sched_migrate_task \
             sched_process_fork sched_process_exit; do events+=(-e "sched:$e"); done
    # the EEVDF probes too, when `try --probe eevdf` defined them (guest/eevdf.sh), and the
    # events `try --event` names ($JOB/events, one a line)
    [ -d /sys/kernel/tracing/events/eevdf ] && events+=(-e eevdf)
    if [ -s "$JOB/events" ]; then
        while read -r e; do events+=(-e "$e"); done < "$JOB/events"
    fi
    trace-cmd start -C mono -b 32768 "${events[@]}" -e task:task_rename > /dev/null || exit 4
}

trace_stop() {
    trace-cmd stop
    grep -h overrun /sys/kernel/tracing/per_cpu/cpu*/stats > trace.overruns
    trace-cmd extract -o trace.dat > /dev/null 2>&1
}
