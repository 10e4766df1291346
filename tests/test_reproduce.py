from schedlab.reproduce import experiments

# Seed 000's table: (capacity, invariance) → values in ms, which the thread reads as periods.
SEED = {
    (1024, "clock_pelt"): [138, 30, 13],
    (1024, "legacy"): [138, 30, 13],
    (512, "legacy"): [None, 138, 32],
    (512, "clock_pelt"): [276, 60, 26],
}


def test_registry_holds_seed_000():
    registry = experiments()
    assert "pelt-invariance" in registry
    assert "000_6f41fe18b85b8edc" in registry["pelt-invariance"].source


def test_pelt_invariance_sources_are_the_seeds_and_all_ok():
    figures = experiments()["pelt-invariance"].run()
    sources = [f.source for f in figures]
    expected = [("not reachable" if v is None else str(v)) for values in SEED.values() for v in values]
    assert sources == expected
    assert all(f.ok for f in figures), [f for f in figures if not f.ok]


def test_reproduce_command(cli):
    r = cli("reproduce")
    out = r.stdout.decode()
    assert r.returncode == 0, out
    assert out.count("OK") == 12 and "FAIL" not in out
    assert "1.048576" in out


def test_reproduce_list_and_unknown(cli):
    r = cli("reproduce", "--list")
    assert r.returncode == 0 and b"pelt-invariance" in r.stdout
    r = cli("reproduce", "no-such-figure")
    assert r.returncode == 2 and b"no-such-figure" in r.stderr
