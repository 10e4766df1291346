//! Reading trace.dat back (`workload::replay::dat`): a run's trace.dat, version 7 (zstd
//! chunks) and 6, gives, CPU by CPU, the records its text trace prints (the text is
//! `trace-cmd report -N -t`'s, which tests/test_trace_dat.py checks against trace-cmd):
//! the same times, pids and events, the same switch and marker fields; across CPUs, in
//! time order, the lower CPU first at one instant, as trace-cmd report orders them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schedlab::run::{run, RunSpec, WorkloadSource};
use schedlab::trace::TraceFormat;
use schedlab::workload::replay::dat::Trace;

/// One event as the text trace prints it: time, pid, name, and the rest of its line.
type Line = (u64, i32, String, String);

fn corpus(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/rtapp-corpus")
        .join(name)
}

/// `video-short.json` with rt-app's ftrace markers on (prints, long records), 1 s on
/// hikey960 under schedutil (frequency changes), traced as `format` into `dir/name`.
fn traced(dir: &Path, name: &str, format: TraceFormat) -> PathBuf {
    let text = std::fs::read_to_string(corpus("video-short.json")).unwrap();
    let text = text.replacen(
        r#""global" : {"#,
        r#""global" : { "ftrace" : "main,task,loop,event","#,
        1,
    );
    let path = dir.join(name);
    let workload = WorkloadSource::Text {
        text,
        origin: "video".into(),
    };
    let spec = RunSpec {
        sets: vec!["cpufreq.governor=schedutil".into()],
        duration: Some(1_000_000_000),
        trace: Some(path.clone()),
        trace_format: Some(format),
        ..RunSpec::new(workload, "hikey960")
    };
    run(&spec, |_, _| true).unwrap();
    path
}

/// The text trace's lines by CPU.
fn text_by_cpu(text: &str) -> BTreeMap<u32, Vec<Line>> {
    let mut cpus: BTreeMap<u32, Vec<Line>> = BTreeMap::new();
    for line in text.lines().skip(1) {
        let open = line.find(" [").unwrap();
        let task = line[..open].trim();
        let pid = task[task.rfind('-').unwrap() + 1..].parse().unwrap();
        let cpu = line[open + 2..open + 5].parse().unwrap();
        let rest = line[open + 7..].trim_start();
        let (time, rest) = rest.split_once(": ").unwrap();
        let (secs, nsecs) = time.split_once('.').unwrap();
        let ts = secs.parse::<u64>().unwrap() * 1_000_000_000 + nsecs.parse::<u64>().unwrap();
        let (event, fields) = rest.split_once(':').unwrap();
        cpus.entry(cpu)
            .or_default()
            .push((ts, pid, event.into(), fields.trim().into()));
    }
    cpus
}

/// The value of `key=` in a line's fields.
fn value<'a>(fields: &'a str, key: &str) -> &'a str {
    let at = fields.find(&format!("{key}=")).unwrap() + key.len() + 1;
    fields[at..].split(' ').next().unwrap()
}

#[test]
fn a_runs_trace_dat_reads_back_as_its_text_trace() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(traced(dir.path(), "t.txt", TraceFormat::Txt)).unwrap();
    let want = text_by_cpu(&text);
    assert!(want.values().map(Vec::len).sum::<usize>() > 5_000);
    for format in [TraceFormat::Dat, TraceFormat::Dat6] {
        let trace = Trace::open(&traced(dir.path(), "t.dat", format)).unwrap();
        assert_eq!(
            trace.meta.version,
            if format == TraceFormat::Dat { 7 } else { 6 }
        );
        assert_eq!(trace.meta.nr_cpus, 8);
        let ev = &trace.meta.events;
        let field = |id: u16, name: &str| ev[&id].field(name).unwrap().clone();
        let mut got: BTreeMap<u32, Vec<Line>> = BTreeMap::new();
        let mut last = (0, 0);
        let (mut switches, mut prints) = (0, 0);
        let lost = trace
            .for_each(|ts, cpu, rec| {
                assert!((ts, cpu) >= last, "{:?} after {last:?}", (ts, cpu));
                last = (ts, cpu);
                let name = ev[&rec.id()].name.as_str();
                let line = &want[&cpu][got.get(&cpu).map_or(0, Vec::len)];
                match name {
                    "sched_switch" => {
                        switches += 1;
                        let comm = rec.str(&field(rec.id(), "prev_comm"));
                        assert_eq!(comm, value(&line.3, "prev_comm"));
                        let next = rec.int(&field(rec.id(), "next_pid"));
                        assert_eq!(next.to_string(), value(&line.3, "next_pid"));
                    }
                    "print" => {
                        prints += 1;
                        // Its ip is tracing_mark_write's address, printed as its symbol.
                        let buf = rec.str(&field(rec.id(), "buf"));
                        assert_eq!(format!("tracing_mark_write: {}", buf.trim_end()), line.3);
                    }
                    _ => {}
                }
                let entry = (ts, rec.pid(), name.to_string(), line.3.clone());
                got.entry(cpu).or_default().push(entry);
                Ok(())
            })
            .unwrap();
        assert_eq!(lost, 0);
        assert!(
            switches > 500 && prints > 1000,
            "{switches} switches, {prints} prints"
        );
        assert_eq!(got, want, "{format:?}");
    }
}
