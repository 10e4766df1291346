use super::*;
use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/rtapp-corpus")
}

fn load_rel(rel: &str, dialect: Dialect) -> Result<Workload, InputError> {
    load(&corpus().join(rel), dialect)
}

fn json_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

#[test]
fn the_whole_corpus_loads_or_is_refused_as_old_grammar() {
    let mut files = Vec::new();
    json_files(&corpus(), &mut files);
    files.sort();
    assert!(files.len() >= 40, "corpus has {} files", files.len());
    for f in files {
        let rel = f.strip_prefix(corpus()).unwrap().display().to_string();
        let old = rel.starts_with("merge/") || rel.ends_with("taskset.json");
        match load(&f, Dialect::Workgen) {
            Ok(_) => assert!(!old, "{rel} should be refused"),
            Err(e) if old => {
                let e = e.to_string();
                assert!(
                    e.contains("old rt-app grammar") || e.contains("no \"tasks\""),
                    "{rel}: {e}"
                );
            }
            Err(e) => panic!("{rel}: {e}"),
        }
    }
}

#[test]
fn merge_thread_files_name_the_old_grammar() {
    let e = load_rel("merge/thread0.json", Dialect::Workgen)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("tasks.thread0") && e.contains("old rt-app grammar"),
        "{e}"
    );
}

#[test]
fn example5_collapses_under_json_c_and_keeps_order_under_workgen() {
    // rtapp.md §1.1: rt-app sees 6 events in p1 (one run of 100000 in the first run slot).
    let c = load_rel("tutorial/example5.json", Dialect::JsonC).unwrap();
    let p1 = &c.tasks[0].phases[1];
    assert_eq!(p1.events.len(), 6);
    assert_eq!(p1.events[1], Event::Run(Work::Us(100000)));
    assert_eq!(c.tasks[1].phases[0].events.len(), 5);
    assert!(c.warnings.iter().any(|w| w.contains("repeated key")));
    let w = load_rel("tutorial/example5.json", Dialect::Workgen).unwrap();
    assert_eq!(w.tasks[0].phases[1].events.len(), 8);
    assert_eq!(w.tasks[1].phases[0].events.len(), 8);
    assert_eq!(w.tasks[0].params.priority, Some(-19));
    assert_eq!(w.tasks[0].cpus, Some(vec![0]));
}

#[test]
fn spreading_tasks_repeated_phase_name() {
    assert_eq!(
        load_rel("spreading-tasks.json", Dialect::JsonC)
            .unwrap()
            .tasks[1]
            .phases
            .len(),
        3
    );
    assert_eq!(
        load_rel("spreading-tasks.json", Dialect::Workgen)
            .unwrap()
            .tasks[1]
            .phases
            .len(),
        4
    );
}

#[test]
fn video_needs_workgen_for_its_bare_suspend() {
    let e = load_rel("video-short.json", Dialect::JsonC)
        .unwrap_err()
        .to_string();
    assert!(e.contains("line") && e.contains("expected ':'"), "{e}");
    let w = load_rel("video-short.json", Dialect::Workgen).unwrap();
    let t = &w.tasks[0];
    assert!(t
        .phases
        .iter()
        .flat_map(|p| &p.events)
        .any(|e| *e == Event::Suspend(t.name.clone())));
}

#[test]
fn loop_rules_without_and_with_phases() {
    let w = load_rel("observed-output/t1.json", Dialect::Workgen).unwrap();
    let periodic = &w.tasks[0];
    assert_eq!(
        (periodic.instance, periodic.loops, periodic.phases[0].loops),
        (2, 1, 5)
    );
    assert_eq!(
        periodic.phases[0].events,
        vec![
            Event::Run(Work::Us(2000)),
            Event::Timer {
                name: "unique".into(),
                period_us: 10000,
                absolute: false
            },
        ]
    );
    let phased = &w.tasks[1];
    assert_eq!(phased.loops, 1);
    assert_eq!(
        phased.phases.iter().map(|p| p.loops).collect::<Vec<_>>(),
        vec![3, 2]
    );
    assert_eq!(w.global.duration, Some(2_000_000_000));
    assert_eq!(w.global.calibration, Calibration::PLoad(50));
    assert_eq!(w.global.log_basename, "rt");
    let forever = parse(
        r#"{"tasks": {"t": {"run": 1, "sleep": 1}}}"#,
        "x",
        Dialect::Workgen,
    )
    .unwrap();
    assert_eq!(
        (forever.tasks[0].loops, forever.tasks[0].phases[0].loops),
        (-1, 1)
    );
}

fn parse_err(text: &str) -> String {
    parse(text, "w.json", Dialect::Workgen)
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_input_names_the_json_path() {
    let e = parse_err(r#"{"tasks": {"t": {"phases": {"p": {"run": "abc"}}}}}"#);
    assert!(
        e.starts_with("w.json: tasks.t.phases.p.run (line 1, column"),
        "{e}"
    );
    assert!(e.contains("expected an integer, found a string"), "{e}");
    let e = parse_err(r#"{"tasks": {"t": {"run": 1000.0}}}"#);
    assert!(e.contains("tasks.t.run") && e.contains("fraction"), "{e}");
    let e = parse_err(r#"{"tasks": {"t": {"sleep": -5}}}"#);
    assert!(e.contains("must not be negative"), "{e}");
    let e = parse_err(r#"{"tasks": {"t": {"run": -2}}}"#);
    assert!(e.contains("negative duration"), "{e}");
    let e = parse_err(r#"{"tasks": {"t": {"lock_pages": true, "run": 1}}}"#);
    assert!(
        e.contains("tasks.t.lock_pages") && e.contains("\"lock\" event needs a string"),
        "{e}"
    );
    let e = parse_err(r#"{"tasks": {"t": {"policy": "SCHED_FOO", "run": 1}}}"#);
    assert!(e.contains("unknown policy"), "{e}");
    let e = parse_err(r#"{"tasks": {"t": {"run": 1, "fork": "nobody"}}}"#);
    assert!(e.contains("fork of unknown task"), "{e}");
    let e = parse_err(r#"{"tasks": {"t": {"phases": {"p": {"loop": 2}}}}}"#);
    assert!(
        e.contains("tasks.t.phases.p") && e.contains("no events"),
        "{e}"
    );
    let e = parse_err("{\"tasks\": {\n\"t\": {\"run\": 1,,}}}");
    assert!(e.starts_with("w.json: line 2, column"), "{e}");
    assert!(parse_err(r#"{"global": {}}"#).contains("no \"tasks\""));
}

#[test]
fn unknown_keys_warn_never_silently() {
    let w = parse(
        r#"{"global": {"frag": 1}, "tasks": {"t": {"slep": 5, "run": 1}}}"#,
        "w.json",
        Dialect::Workgen,
    )
    .unwrap();
    assert_eq!(w.warnings.len(), 2, "{:?}", w.warnings);
    assert!(w.warnings[1].contains("tasks.t.slep"));
}

#[test]
fn event_prefixes_follow_rt_app() {
    let w = parse(
        r#"{"tasks": {"t": {"runtime1": 5, "run-2": 6, "broadcast": "c", "synced": {"ref": "c", "mutex": "m"}, "timer9": {"ref": "x", "period": 7, "mode": "absolute"}, "suspend": "other", "yield": 0}}}"#,
        "w.json",
        Dialect::Workgen,
    )
    .unwrap();
    assert_eq!(
        w.tasks[0].phases[0].events,
        vec![
            Event::Runtime(Work::Us(5)),
            Event::Run(Work::Us(6)),
            Event::Broad("c".into()),
            Event::Sync {
                cond: "c".into(),
                mutex: "m".into()
            },
            Event::Timer {
                name: "x".into(),
                period_us: 7,
                absolute: true
            },
            Event::Suspend("other".into()),
            Event::Yield,
        ]
    );
}
