//! GRUB bandwidth reclaiming (`grub_reclaim`): how much budget a SCHED_FLAG_RECLAIM task
//! consumes for `delta` ns of running. Three equations, one per kernel era.

use super::{DlRq, BW_SHIFT, BW_UNIT, RATIO_SHIFT};

/// Which `grub_reclaim` the run uses (`--set dl.grub=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grub {
    /// Before 6.5: dq = −max{u/Umax, 1 − Uinact − Uextra}·dt.
    Classic,
    /// Seed 004's patch (May 2023, not merged): dq = −Ureclaim/(Ureclaim + min(Uextra +
    /// Uinact, Umax))·dt, with only the reclaiming tasks in Ureclaim.
    Pillai2023,
    /// 6.5+ (6a9d623aad89): dq = −(max{u, Umax − Uinact − Uextra}/Umax)·dt.
    Mainline,
}

impl Grub {
    pub const NAMES: [(&'static str, Grub); 3] = [
        ("classic", Grub::Classic),
        ("pillai-2023", Grub::Pillai2023),
        ("mainline", Grub::Mainline),
    ];

    pub fn name(self) -> &'static str {
        Grub::NAMES.iter().find(|(_, g)| *g == self).unwrap().0
    }

    pub fn from_name(s: &str) -> Option<Grub> {
        Grub::NAMES.iter().find(|(n, _)| *n == s).map(|(_, g)| *g)
    }
}

/// `grub_reclaim(delta, rq, dl_se)` for a task of bandwidth `dl_bw` on `dl`.
pub fn grub_reclaim(grub: Grub, delta: u64, dl: &DlRq, dl_bw: u64) -> u64 {
    let u_inact = dl.this_bw - dl.running_bw; // Utot − Uact
    match grub {
        // 6.1 grub_reclaim: compares Uinact + Uextra with 1 − u·bw_ratio so as never to go
        // negative.
        Grub::Classic => {
            let u_act_min = (dl_bw * dl.bw_ratio) >> RATIO_SHIFT;
            let u_act = if u_inact + dl.extra_bw > BW_UNIT - u_act_min {
                u_act_min
            } else {
                BW_UNIT - u_inact - dl.extra_bw
            };
            (delta * u_act) >> BW_SHIFT
        }
        // The patch's grub_reclaim: div64_u64(delta·reclaim_bw, reclaim_bw + reclaimable).
        Grub::Pillai2023 => {
            let reclaimable = (dl.extra_bw.wrapping_add(u_inact)).min(dl.max_bw);
            let num = delta as u128 * dl.reclaim_bw as u128;
            (num / (dl.reclaim_bw + reclaimable).max(1) as u128) as u64
        }
        // 6.12 grub_reclaim.
        Grub::Mainline => {
            let u_act = if u_inact + dl.extra_bw > dl.max_bw - dl_bw {
                dl_bw
            } else {
                dl.max_bw - u_inact - dl.extra_bw
            };
            let u_act = (u_act * dl.bw_ratio) >> RATIO_SHIFT;
            (delta * u_act) >> BW_SHIFT
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::deadline::to_ratio;

    /// One reclaiming task of `q`/`p` ms alone on a one-CPU root domain, always active
    /// (a busy loop): its share of the CPU is Q over the time its budget lasts.
    fn share(grub: Grub, q: u64, p: u64) -> f64 {
        let bw = to_ratio(p, q);
        let mut dl = DlRq::new(Some((1_000_000, 950_000)));
        dl.extra_bw -= bw; // __dl_add on a root domain of one CPU
        dl.this_bw = bw;
        dl.running_bw = bw;
        dl.reclaim_bw = bw;
        let dq = grub_reclaim(grub, 1_000_000_000, &dl, bw) as f64 / 1e9;
        q as f64 / dq / p as f64
    }

    #[test]
    fn seed_004_single_task_shares() {
        // Closed forms: classic Q/(1 − Uextra) with Uextra = 0.95 − u; the other two 0.95.
        for (q, p, classic) in [
            (7, 10, 0.7 / 0.75),
            (2, 10, 0.2 / 0.25),
            (1, 100, 0.01 / 0.06),
        ] {
            assert!((share(Grub::Classic, q, p) - classic).abs() < 1e-4);
            assert!((share(Grub::Pillai2023, q, p) - 0.95).abs() < 1e-4);
            // bw_ratio 269/256 is 1/0.9516, not 1/0.95: mainline reclaims to 95.17%.
            let m = share(Grub::Mainline, q, p);
            assert!((m - 256.0 / 269.0).abs() < 2e-4, "{m}");
        }
    }

    #[test]
    fn fixed_point_constants() {
        let dl = DlRq::new(Some((1_000_000, 950_000)));
        assert_eq!(
            (dl.max_bw, dl.extra_bw, dl.bw_ratio),
            (996_147, 996_147, 269)
        );
        let inf = DlRq::new(None);
        assert_eq!((inf.max_bw, inf.bw_ratio), (BW_UNIT, 256));
    }
}
