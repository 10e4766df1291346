"""`schedlab.analysis`: a run's results as DataFrames, named and shaped as LISA's analyses
where LISA has one (docs/analysis.md maps them). Every function takes a `RunResult`
first; the result's methods of the same names delegate here (`run.df_tasks_signal("util")`).
Frames are indexed by `Time`, the trace clock in seconds; columns LISA does not have carry
their unit in their name."""

from schedlab.analysis.deadline import df_dl_runtime
from schedlab.analysis.events import EVENT_NAMES, df_event, window
from schedlab.analysis.frequency import (df_cpu_frequency, df_cpu_frequency_residency, df_cpus_frequency,
                                         df_domain_frequency_residency, df_frequency_residency, df_policy_residency,
                                         freq_domains)
from schedlab.analysis.idle import (df_cluster_idle_state_residency, df_cpu_idle, df_cpu_idle_state_residency,
                                    df_cpus_idle)
from schedlab.analysis.latency import df_latency_preemption, df_latency_wakeup, df_wakeup_latency
from schedlab.analysis.load_tracking import df_cpus_signal, df_task_signal, df_tasks_signal
from schedlab.analysis.rtapp import df_rtapp_stats
from schedlab.analysis.summary import df_cluster_energy, df_cpus_summary, df_tasks_summary, run_metrics
from schedlab.analysis.tasks import (TaskState, df_migrations, df_task_states, df_task_total_residency,
                                     df_tasks_runtime, df_tasks_states, df_tasks_total_residency)

__all__ = [
    "EVENT_NAMES", "TaskState", "df_cluster_energy", "df_cluster_idle_state_residency", "df_cpu_frequency",
    "df_cpu_frequency_residency", "df_cpu_idle", "df_cpu_idle_state_residency", "df_cpus_frequency",
    "df_cpus_idle", "df_cpus_signal", "df_cpus_summary", "df_dl_runtime", "df_domain_frequency_residency",
    "df_event", "df_frequency_residency", "df_latency_preemption", "df_latency_wakeup", "df_migrations",
    "df_policy_residency",
    "df_rtapp_stats", "df_task_signal", "df_task_states", "df_task_total_residency", "df_tasks_runtime",
    "df_tasks_signal", "df_tasks_states", "df_tasks_summary", "df_tasks_total_residency", "df_wakeup_latency",
    "freq_domains", "run_metrics", "window",
]

# The functions a RunResult offers as methods.
FUNCTIONS = tuple(name for name in __all__ if name.startswith("df_"))
