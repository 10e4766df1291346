//! Flags the core passes to the classes (kernel/sched/sched.h).

/// `enqueue_task` flags.
pub const ENQUEUE_WAKEUP: u32 = 0x01;
/// Put back after a change of priority or class (`rt_mutex_setprio`).
pub const ENQUEUE_RESTORE: u32 = 0x02;
/// Queue at the head of its list (an RT task lowered by a PI change; unused by fair).
pub const ENQUEUE_HEAD: u32 = 0x10;
/// A throttled deadline entity's new period (`dl_task_timer`).
pub const ENQUEUE_REPLENISH: u32 = 0x20;
pub const ENQUEUE_MIGRATED: u32 = 0x40;
pub const ENQUEUE_INITIAL: u32 = 0x80;
/// The task arrives from another CPU by push or pull (`task_on_rq_migrating`).
pub const ENQUEUE_MIGRATING: u32 = 0x100;
/// 7.x: the task is counted queued already (its place leaves itself out).
pub const ENQUEUE_QUEUED: u32 = 0x0020_0000;

/// `dequeue_task` flags.
pub const DEQUEUE_SLEEP: u32 = 0x01;
/// Taken out for a change of priority or class, put back at once (`rt_mutex_setprio`).
pub const DEQUEUE_SAVE: u32 = 0x02;
/// With DEQUEUE_SAVE, for a change of place or class (`__sched_setscheduler`,
/// `rt_mutex_setprio`, `sched_move_task`): 6.1's CFS lets min_vruntime move past the task.
/// DEQUEUE_SAVE alone (`set_user_nice`) keeps it, the task to come back where it was.
pub const DEQUEUE_MOVE: u32 = 0x04;
/// Never delayed (a dying task).
pub const DEQUEUE_SPECIAL: u32 = 0x10;
/// The task is moving to another CPU (`task_on_rq_migrating`).
pub const DEQUEUE_MIGRATING: u32 = 0x100;
pub const DEQUEUE_DELAYED: u32 = 0x200;

/// Wake flags (`select_task_rq`, `wakeup_preempt`); the low nibble is the SD_BALANCE_* flag
/// of the placement (fork, wakeup; schedlab's threads never exec).
pub const WF_FORK: u32 = 0x04;
pub const WF_TTWU: u32 = 0x08;
/// The waker goes to sleep after the wakeup (a pipe or socket hand-over).
pub const WF_SYNC: u32 = 0x10;
/// Prefer the waker's CPU (`wake_up_poll_on_current_cpu`).
pub const WF_CURRENT_CPU: u32 = 0x40;
