//! PELT benchmarks: one task-entity update, and `replay` of CSV (parsing included).

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use schedlab::sched::pelt::{update_load_avg_se, ContribScale, SchedAvg};
use schedlab::solo::replay::replay_csv;

/// A mixed sequence of update gaps (ns): sub-period, one period, several periods.
const GAPS: [u64; 8] = [
    4_000_000,
    350_000,
    1_048_576,
    20_000_000,
    999,
    2_500_000,
    180_000_000,
    64_000,
];

fn update(c: &mut Criterion) {
    let mut group = c.benchmark_group("pelt");
    group.throughput(Throughput::Elements(GAPS.len() as u64));
    group.bench_function("update_load_avg_se", |b| {
        let (mut sa, mut now) = (SchedAvg::default(), 0u64);
        b.iter(|| {
            for (i, gap) in GAPS.iter().enumerate() {
                now += gap;
                let on_rq = i % 4 != 3;
                black_box(update_load_avg_se(
                    now,
                    &mut sa,
                    on_rq,
                    on_rq as u64,
                    on_rq,
                    1024,
                    ContribScale::NONE,
                ));
            }
        })
    });
    group.finish();
}

fn replay(c: &mut Criterion) {
    let rows = 1_000_000u64;
    let mut csv = String::from("now_ns,load,runnable,running\n");
    let mut now = 0;
    for i in 0..rows {
        now += GAPS[i as usize % GAPS.len()];
        let on = (i % 4 != 3) as u8;
        csv.push_str(&format!("{now},{on},{on},{on}\n"));
    }
    let mut group = c.benchmark_group("pelt");
    group.throughput(Throughput::Elements(rows));
    group.sample_size(10);
    group.bench_function("replay_csv", |b| {
        b.iter(|| black_box(replay_csv(csv.as_bytes(), 1024).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, update, replay);
criterion_main!(benches);
