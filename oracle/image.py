"""The guest: Debian's stock kernel, extracted (never installed on the host), and a bookworm
user space with rt-app and trace-cmd, packed as initramfs pieces that a boot concatenates.

Pieces under the cache (SCHEDLAB_ORACLE_CACHE, default /var/tmp/schedlab-oracle):
  userspace.cpio            bookworm minbase + rt-app, trace-cmd (shared by every kernel)
  <kernel>/vmlinuz          the kernel of KERNELS[<kernel>]'s suite
  <kernel>/modules.cpio     the few modules the guest needs (virtio-blk for the result disk)
  schbench-<commit>         schbench, built static on the host from its repository at SCHBENCH
                            (it is in no Debian suite); a schbench job carries it under /job
A job adds a third piece (its files under /job); see oracle.py.
"""

import lzma
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from errors import OracleError

MIRROR = os.environ.get("SCHEDLAB_ORACLE_MIRROR", "http://deb.debian.org/debian")
# The kernels schedlab has presets for, and the Debian suite whose linux-image-amd64 gives each.
KERNELS = {"6.1": "bookworm", "6.12": "bookworm-backports", "7.3": "trixie-backports"}
# What a kernel boots with besides the oracle's own command line. Debian's 7.3 starts DAMON's
# statistics module (damon_stat.enabled=Y), whose kdamond.0 thread wakes every 44 ms on the
# vCPUs it shares with the workload (up-nice-2@7.3's first records: 126 runs in 10.4 s, none
# under 6.1 and 6.12); the records since 2026-11-28 boot it off.
KERNEL_CMDLINE = {"7.3": "damon_stat.enabled=N"}
USERSPACE = "bookworm"
PACKAGES = ["rt-app", "trace-cmd", "linux-perf", "rt-tests", "procps", "util-linux", "kmod",
            "busybox-static", "gzip"]
# The guest's result disk; everything else it needs (serial, tracefs) is built in.
MODULE_ROOTS = ["virtio_pci", "virtio_blk"]
HOST_TOOLS = {"qemu-system-x86_64": "qemu-system-x86", "mmdebstrap": "mmdebstrap",
              "cpio": "cpio", "dpkg-deb": "dpkg", "apt-get": "apt"}
# schbench's repository (SCHEDLAB_SCHBENCH_GIT: a URL or a local clone) and the commit built.
SCHBENCH_GIT = os.environ.get("SCHEDLAB_SCHBENCH_GIT", "https://github.com/masoncl/schbench")
SCHBENCH = "24e32b8ef67cbafb0761aed68747d90a291767ae"
GUEST = Path(__file__).parent / "guest"


def cache() -> Path:
    return Path(os.environ.get("SCHEDLAB_ORACLE_CACHE", "/var/tmp/schedlab-oracle"))


def check_host() -> None:
    """Every host tool the oracle runs, or one message naming the packages to install."""
    missing = sorted({pkg for tool, pkg in HOST_TOOLS.items() if shutil.which(tool) is None})
    if missing:
        raise OracleError(f"missing host packages: apt-get install {' '.join(missing)}")


def kernel_suite(kernel: str) -> str:
    if kernel not in KERNELS:
        raise OracleError(f"unknown kernel {kernel!r}: the oracle boots {', '.join(KERNELS)}")
    return KERNELS[kernel]


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)
    except subprocess.CalledProcessError as e:
        tail = (e.stderr or e.stdout or "").strip().splitlines()[-3:]
        raise OracleError(f"{' '.join(cmd[:3])} failed: {' / '.join(tail)}") from None


def pack(root: Path, out: Path) -> None:
    """A newc archive of root (uncompressed: it unpacks fastest under emulation)."""
    files = subprocess.run(["find", ".", "-mindepth", "1"], cwd=root, check=True,
                           capture_output=True).stdout
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files,
                       stdout=f, check=True)
    tmp.rename(out)


def _rootfs_current(root: Path) -> bool:
    """Whether root was built with today's package list (its stamp holds the list)."""
    stamp = root / ".complete"
    return stamp.exists() and stamp.read_text() == " ".join(PACKAGES)


def userspace() -> Path:
    """bookworm minbase with the workload tools, slimmed, with the oracle's /init."""
    out = cache() / "userspace.cpio"
    root = cache() / "rootfs"
    if _rootfs_current(root) and out.exists() and out.stat().st_mtime >= (GUEST / "init").stat().st_mtime:
        return out
    if not _rootfs_current(root):
        shutil.rmtree(root, ignore_errors=True)
        cache().mkdir(parents=True, exist_ok=True)
        print(f"oracle: building the {USERSPACE} user space (mmdebstrap, a few minutes)", flush=True)
        run(["mmdebstrap", "--variant=minbase", "--include=" + ",".join(PACKAGES),
             USERSPACE, str(root), MIRROR])
        for junk in ["usr/share/doc", "usr/share/man", "usr/share/locale", "usr/share/info",
                     "usr/share/zoneinfo", "usr/share/i18n", "usr/lib/x86_64-linux-gnu/gconv",
                     "var/cache/apt", "var/lib/apt/lists", "usr/share/perl", "usr/share/perl5",
                     "usr/lib/x86_64-linux-gnu/perl-base", "usr/lib/x86_64-linux-gnu/perl"]:
            shutil.rmtree(root / junk, ignore_errors=True)
        (root / ".complete").write_text(" ".join(PACKAGES))
    shutil.copy(GUEST / "init", root / "init")
    (root / "init").chmod(0o755)
    with tempfile.TemporaryDirectory() as t:  # everything but the stamp
        pack_dir = Path(t) / "root"
        subprocess.run(["cp", "-a", "--reflink=auto", str(root), str(pack_dir)], check=True)
        (pack_dir / ".complete").unlink()
        pack(pack_dir, out)
    return out


def schbench() -> bytes:
    """schbench at SCHBENCH, as its Makefile builds it (gcc -O2) but static: the guest's
    bookworm libc need not match the host's. Cached."""
    out = cache() / f"schbench-{SCHBENCH[:12]}"
    if not out.exists():
        for tool, pkg in (("git", "git"), ("gcc", "gcc")):
            if shutil.which(tool) is None:
                raise OracleError(f"missing host package for schbench: apt-get install {pkg}")
        with tempfile.TemporaryDirectory() as t:
            src = Path(t) / "schbench"
            run(["git", "clone", "--quiet", SCHBENCH_GIT, str(src)])
            run(["git", "-C", str(src), "checkout", "--quiet", SCHBENCH])
            run(["gcc", "-Wall", "-O2", "-static", "-o", str(src / "schbench.bin"),
                 str(src / "schbench.c"), "-lpthread", "-lm"])
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src / "schbench.bin", out.with_suffix(".tmp"))
            out.with_suffix(".tmp").rename(out)
    return out.read_bytes()


def _apt(suite: str) -> list[str]:
    """apt options for a private state folder holding only suite's index."""
    a = cache() / "apt" / suite
    for d in ["lists/partial", "cache/archives/partial", "preferences.d"]:
        (a / d).mkdir(parents=True, exist_ok=True)
    (a / "sources.list").write_text(
        f"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {MIRROR} {suite} main\n")
    return ["-o", f"Dir::Etc::sourcelist={a / 'sources.list'}", "-o", "Dir::Etc::sourceparts=-",
            "-o", f"Dir::State::Lists={a / 'lists'}", "-o", f"Dir::Cache={a / 'cache'}",
            "-o", f"Dir::Etc::preferencesparts={a / 'preferences.d'}"]


def kernel(version: str) -> Path:
    """The folder of one kernel: vmlinuz, modules.cpio, release (uname -r)."""
    suite = kernel_suite(version)
    d = cache() / version
    if (d / "modules.cpio").exists():
        return d
    d.mkdir(parents=True, exist_ok=True)
    apt = _apt(suite)
    print(f"oracle: fetching linux-image-amd64 from {suite}", flush=True)
    run(["apt-get", *apt, "update"])
    deps = run(["apt-cache", *apt, "depends", "linux-image-amd64"]).stdout.split()
    image = next((p for p in deps if p.startswith("linux-image-") and p[12:13].isdigit()), None)
    if image is None:
        raise OracleError(f"{suite} has no linux-image-amd64 dependency")
    release = image.removeprefix("linux-image-")
    # Since 7.x linux-image-VER is empty and depends on linux-binary-VER (vmlinuz),
    # linux-modules-VER and linux-base-VER, installed under /usr/lib/modules/VER.
    parts = run(["apt-cache", *apt, "depends", image]).stdout.split()
    parts = sorted({p for p in parts if p.startswith("linux-") and p.endswith(release)})
    debs = d / "debs"
    debs.mkdir(exist_ok=True)
    run(["apt-get", *apt, "download", image, *parts], cwd=debs)
    tree = d / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    for deb in debs.glob("*.deb"):
        run(["dpkg-deb", "-x", str(deb), str(tree)])
    modules = next(m for m in [tree / "usr/lib/modules" / release, tree / "lib/modules" / release]
                   if (m / "modules.order").exists())
    vmlinuz = next(v for v in [tree / "boot" / f"vmlinuz-{release}", modules / "vmlinuz"]
                   if v.exists())
    shutil.copy(vmlinuz, d / "vmlinuz")
    _modules(modules, d / "modules.cpio")
    (d / "release").write_text(release + "\n")
    shutil.rmtree(tree)
    return d


def _read_module(src: Path, path: str) -> bytes:
    file = next(src.glob(path.split(".ko")[0] + ".ko*"))
    data = file.read_bytes()
    return lzma.decompress(data) if file.suffix == ".xz" else data


def _depends(module: bytes) -> list[str]:
    """The depends= entry of a module's .modinfo strings (what modinfo -F depends prints)."""
    m = re.search(rb"\0depends=([^\0]*)\0", module)
    return [d.replace("-", "_") for d in m.group(1).decode().split(",") if d] if m else []


def _modules(src: Path, out: Path) -> None:
    """MODULE_ROOTS and what they depend on, decompressed, listed in load order."""
    order = (src / "modules.order").read_text().split()
    by_name = {Path(p).name.split(".ko")[0].replace("-", "_"): p for p in order}
    loaded: dict[str, bytes] = {}

    def need(name: str) -> None:
        path = by_name.get(name)
        if path is None or path in loaded:  # built in, or already listed
            return
        data = _read_module(src, path)
        for dep in _depends(data):
            need(dep)
        loaded[path] = data

    for root in MODULE_ROOTS:
        need(root)
    with tempfile.TemporaryDirectory() as t:
        mods = Path(t) / "usr" / "lib" / "oracle-modules"  # usr/: a lib entry would replace the /lib link
        mods.mkdir(parents=True)
        names = [f"{i:02}-{Path(p).name.split('.ko')[0]}.ko" for i, p in enumerate(loaded)]
        for name, data in zip(names, loaded.values()):
            (mods / name).write_bytes(data)
        (mods / "list").write_text("\n".join(names) + "\n")
        pack(Path(t), out)
