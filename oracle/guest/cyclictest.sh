# The oracle's cyclictest job: rt-tests' `cyclictest ARGS` ($JOB/params: CYCLICTEST_ARGS)
# traced (trace.sh), its report in cyclictest.log.
set -u
. "$JOB/params"
. "$JOB/trace.sh"
trace_start
# shellcheck disable=SC2086 # CYCLICTEST_ARGS is a list of words
cyclictest $CYCLICTEST_ARGS > cyclictest.log 2>&1
echo "cyclictest=$?" > status
trace_stop
