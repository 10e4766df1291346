# `oracle.py try --probe eevdf`: the kernel's EEVDF state on each switch and wakeup, as
# tracepoint probes (group eevdf, read through BTF) on sched_switch and sched_wakeup that the
# jobs' tracing records. eevdf_switch holds prev's and next's entity (vruntime, deadline,
# vlag, vprot, sched_delayed, on_rq, weight) and next's cfs_rq after the pick: zero_vruntime
# (z), the weighted key sum (sw) and weight (sW) of the entities queued but curr, and the
# sums' shift; eevdf_wakeup the woken task's entity, enqueued, and its cfs_rq. Field names
# follow the kernel: 7.x's sums (sum_w_vruntime, sum_weight, sum_shift; h_load weights),
# else 6.x's (avg_vruntime, avg_load; load weights, counted scaled down), without vprot
# before 6.17 and zero_vruntime before its backport (min_vruntime).
D=/sys/kernel/tracing/dynamic_events
entity() { # prefix, task: that task's entity fields
    echo "$1v=$2->se.vruntime $1d=$2->se.deadline $1l=$2->se.vlag $1dl=$2->se.sched_delayed" \
         "$1q=$2->se.on_rq $1w=$2->se.$W.weight ${VPROT:+$1r=$2->se.vprot}"
}
sums() { # task: its cfs_rq's
    echo "z=$1->se.cfs_rq->$ZERO sw=$1->se.cfs_rq->$SUM sW=$1->se.cfs_rq->$LOAD ${SHIFT:+sh=$1->se.cfs_rq->sum_shift}"
}
probed=
for form in "zero_vruntime sum_w_vruntime sum_weight h_load 1 1" \
            "zero_vruntime avg_vruntime avg_load load 1 -" \
            "zero_vruntime avg_vruntime avg_load load - -" \
            "min_vruntime avg_vruntime avg_load load - -"; do
    # shellcheck disable=SC2086 # a form is a list of words
    set -- $form
    ZERO=$1 SUM=$2 LOAD=$3 W=$4 VPROT=${5#-} SHIFT=${6#-}
    echo "t:eevdf/eevdf_switch sched_switch pp=prev->pid $(entity p prev) np=next->pid" \
         "$(entity n next) $(sums next)" >> $D 2>/dev/null || continue
    if echo "t:eevdf/eevdf_wakeup sched_wakeup p=p->pid $(entity '' p) $(sums p)" >> $D; then
        probed=$form
        break
    fi
    echo "-:eevdf/eevdf_switch" >> $D
done
echo "eevdf probes: ${probed:-no form fits this kernel}"
