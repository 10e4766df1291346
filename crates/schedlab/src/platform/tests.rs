use super::*;

#[test]
fn cpulists_round_trip() {
    assert_eq!(
        parse_cpulist("0-3,8, 10-11").unwrap(),
        vec![0, 1, 2, 3, 8, 10, 11]
    );
    assert_eq!(format_cpulist(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
    assert!(parse_cpulist("3-1").is_err());
    assert!(parse_cpulist("1,1").is_err());
    assert!(parse_cpulist("a").is_err());
}

#[test]
fn every_builtin_loads_with_the_documented_shape() {
    let expect = [
        ("hikey", 8, 1, vec![1024; 8]),
        ("hikey960", 8, 2, [vec![462; 4], vec![1024; 4]].concat()),
        ("juno-r2", 6, 2, [vec![1024; 2], vec![383; 4]].concat()),
        (
            "pixel6",
            8,
            3,
            [vec![160; 4], vec![498; 2], vec![1024; 2]].concat(),
        ),
    ];
    for (name, n, domains, caps) in expect {
        let p = load_builtin(name).unwrap();
        assert_eq!(p.nr_cpus(), n, "{name}");
        assert_eq!(p.freq_domains.len(), domains, "{name}");
        assert_eq!(
            p.cpus.iter().map(|c| c.capacity_orig).collect::<Vec<_>>(),
            caps
        );
    }
}

#[test]
fn hikey_is_one_clock_over_two_clusters() {
    let p = load_builtin("hikey").unwrap();
    assert_eq!(p.freq_domains[0].max_khz(), 1_200_000);
    assert_eq!(p.cpus[3].cluster, 0);
    assert_eq!(p.cpus[4].cluster, 1);
    assert!(p.cpus.iter().all(|c| c.freq_domain == 0));
}

#[test]
fn icelake_has_smt_siblings_72_apart_and_an_llc_per_package() {
    let p = load_builtin("icelake-2s").unwrap();
    assert_eq!(p.nr_cpus(), 144);
    assert_eq!(p.freq_domains.len(), 144);
    assert_eq!(p.cpus[5].core, p.cpus[77].core);
    assert_ne!(p.cpus[5].core, p.cpus[6].core);
    assert_eq!(p.cpus[0].llc, p.cpus[107].llc);
    assert_ne!(p.cpus[0].llc, p.cpus[36].llc);
    assert_eq!((p.cpus[108].package, p.cpus[108].numa), (1, 1));
}

#[test]
fn smp_is_made_on_the_fly() {
    let p = load_builtin("smp:3").unwrap();
    assert_eq!(p.nr_cpus(), 3);
    assert!(load_builtin("smp:0").is_err());
    assert!(load_builtin("smp:x").is_err());
}

#[test]
fn qemu_tcg_prices_6_12s_work_at_0_856_of_6_1s_and_7_3s_wakeups_and_switches_apart() {
    use crate::kernel::Kernel;
    use crate::sched::ops::Op;
    let p = load_builtin("qemu-tcg:1").unwrap();
    let (old, new) = (p.costs_for(Kernel::V6_1), p.costs_for(Kernel::V6_12));
    // A switch: 610 ns on the default machine, 5.5 times that under icount, 0.856 of it
    // under 6.12 (perf bench pipe's round trip, 16.1 µs against 18.8).
    assert_eq!(old.get(Op::ContextSwitch), 3_355);
    assert_eq!(new.get(Op::ContextSwitch), 2_872);
    // A measured cost is scaled too: a socket send, 4130 ns under 6.1.
    assert_eq!(new.get(Op::UnixSend), 3_535);
    // rt-app's main thread's set-up: 227 µs on the default machine, 5.5 times that under
    // icount; on two vCPUs its own measured 29.26 ms.
    assert_eq!(old.get(Op::AppInit), 1_248_500);
    let two = load_builtin("qemu-tcg:2").unwrap();
    assert_eq!(two.costs_for(Kernel::V6_1).get(Op::AppInit), 29_260_000);
    // 7.3 wakes and switches more slowly (perf bench pipe's trace under icount): its
    // wakeup 1436 + 855 ns, 1.595 of 6.12's; its switch 2872 + 453 ns, 1.158; the rest as
    // 6.12's, and 6.18 as 6.12.
    let v7_3 = p.costs_for(Kernel::V7_3);
    assert_eq!(new.get(Op::WakeupLocal), 1_436);
    assert_eq!(v7_3.get(Op::WakeupLocal), 2_290);
    // A remote wakeup: 549 ns × 5.5 × 0.856 = 2585, × 1.595.
    assert_eq!(v7_3.get(Op::WakeupRemote), 4_123);
    assert_eq!(v7_3.get(Op::ContextSwitch), 3_326);
    assert_eq!(v7_3.get(Op::UnixSend), 3_535);
    assert_eq!(p.costs_for(Kernel::V6_18), new);
    // Elsewhere one table serves both kernels.
    let smp = load_builtin("smp:2").unwrap();
    assert_eq!(smp.costs_for(Kernel::V6_12), smp.costs_for(Kernel::V6_1));
}

#[test]
fn qemu_tcg_at_k_scales_the_table_and_the_emulators_latencies_of_two_vcpus() {
    use crate::kernel::Kernel;
    let (base, half) = (
        load_builtin("qemu-tcg:2").unwrap(),
        load_builtin("qemu-tcg:2@0.5").unwrap(),
    );
    assert_eq!(half.name, "qemu-tcg:2@0.5");
    // Halved: a halted vCPU's exit (31.2 µs at the first quantile), the interrupts' 200 µs
    // lateness and 30 µs skew, a newly idle pass's stall (166.4 µs at the last). Not a
    // running vCPU's interrupt entry (225 µs at the last): rt-push's RT wakeups of a running
    // vCPU took 73-107 µs at the median on hosts of K 0.4-0.6 as on the reference host.
    assert_eq!(half.halt_exit_ns[0], 15_600);
    assert_eq!(half.irq_entry_ns[19], 225_000);
    assert_eq!((half.irq_jitter_ns, half.irq_skew_ns), (100_000, 15_000));
    assert_eq!(half.newidle_stall_ns[99], 83_200);
    // The scaled table too: a switch, 610 ns × 21 = 12810 on the reference host. Not the
    // measured costs (a fork, 1.625 ms), nor what the boot's passes cost, nor the jobs'
    // stretch (relative to rt-app's calibration in the same guest).
    use crate::sched::ops::Op;
    assert_eq!(base.costs_for(Kernel::V6_1).get(Op::ContextSwitch), 12_810);
    assert_eq!(half.costs_for(Kernel::V6_1).get(Op::ContextSwitch), 6_405);
    for k in [Kernel::V6_1, Kernel::V7_3] {
        assert_eq!(
            half.costs_for(k).get(Op::Fork),
            base.costs_for(k).get(Op::Fork)
        );
        assert_eq!(
            half.start_newidle_cost_for(k),
            base.start_newidle_cost_for(k)
        );
    }
    assert_eq!(half.work_stretch, base.work_stretch);
    for bad in [
        "qemu-tcg:1@0.5",
        "qemu-tcg:2@0",
        "qemu-tcg:2@x",
        "qemu-tcg:2@5",
    ] {
        let e = load_builtin(bad).unwrap_err().to_string();
        assert!(e.contains("needs N of 2 or more"), "{bad}: {e}");
    }
    assert_eq!(load_builtin("qemu-tcg:1@1").unwrap().name, "qemu-tcg:1");
}

#[test]
fn bad_descriptions_are_refused_with_where_and_why() {
    let e = load_builtin("hikey970").unwrap_err();
    assert!(
        e.to_string().contains("unknown platform \"hikey970\""),
        "{e}"
    );
    let base = "name = \"x\"\ndescription = \"d\"\n[[freq_domain]]\nname = \"a\"\ncpus = \"0-1\"\n";
    let cases = [
        (format!("{base}capacity = 1024\n"), "missing field `opps`"),
        (
            format!("{base}capacity = 2000\nopps = [{{khz = 1}}]\n"),
            "outside 1..1024",
        ),
        (
            format!("{base}capacity = 512\nopps = [{{khz = 1}}]\n"),
            "capacity 1024",
        ),
        (
            format!("{base}capacity = 1024\nopps = [{{khz = 2}}, {{khz = 1}}]\n"),
            "strictly increasing",
        ),
        (
            format!("{base}capacity = 1024\nopps = [{{khz = 1}}]\nbogus = 1\n"),
            "unknown field `bogus`",
        ),
        (
            format!("{base}capacity = 1024\ncpus = \"1-2\"\nopps = [{{khz = 1}}]\n"),
            "duplicate key",
        ),
    ];
    for (text, want) in cases {
        let e = parse(&text, "x.toml").unwrap_err().to_string();
        assert!(e.starts_with("x.toml"), "{e}");
        assert!(e.contains(want), "{e} should say {want}");
    }
    let gap = "name = \"x\"\ndescription = \"d\"\n[[freq_domain]]\nname = \"a\"\ncpus = \"1\"\ncapacity = 1024\nopps = [{khz = 1}]\n";
    assert!(parse(gap, "g.toml")
        .unwrap_err()
        .to_string()
        .contains("CPU 0 is in no frequency domain"));
}
