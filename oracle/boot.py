"""One boot of the guest under QEMU TCG: a job's files in, its result folder out.

The job rides in as a third initramfs piece (under /job); the guest writes its results as a
tar archive on a raw virtio disk, read back here. One vCPU runs with icount (1 instruction per
guest ns, idle skipped: guest time does not depend on the host's load); several vCPUs run
multi-threaded TCG in host time (icount's round-robin vCPUs inflate timer interrupts there).
"""

import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import image
from errors import OracleError

DISK_BYTES = 512 << 20
# Boots that may fail for the emulator's sake before a run gives up: multi-threaded TCG now
# and then panics a guest at boot ("Fatal exception in interrupt", about 1 boot in 60 with
# 2 vCPUs here) or hangs it, which has nothing to do with the workload.
BOOTS = 3


class GuestStopped(OracleError):
    """The guest stopped before its job was done (a panic, usually at boot), or hung."""


def _job_piece(files: dict[str, bytes], folder: Path) -> Path:
    root = folder / "piece"
    (root / "job").mkdir(parents=True)
    for name, data in files.items():
        (root / "job" / name).write_bytes(data)
    out = folder / "job.cpio"
    image.pack(root, out)
    return out


def boot(kernel: str, vcpus: int, files: dict[str, bytes], limit_s: int,
         append: str = "") -> dict[str, bytes]:
    """Run files['run.sh'] in the guest, `append` added to the kernel's command line; the
    files it left in its work folder, by name."""
    k = image.kernel(kernel)
    with tempfile.TemporaryDirectory(prefix="schedlab-oracle-") as t:
        t = Path(t)
        initrd = t / "initrd.cpio"
        with open(initrd, "wb") as out:
            for piece in [image.userspace(), k / "modules.cpio", _job_piece(files, t)]:
                with open(piece, "rb") as f:
                    shutil.copyfileobj(f, out)
        disk = t / "result.img"
        with open(disk, "wb") as f:
            f.truncate(DISK_BYTES)
        accel = ["-accel", "tcg"]
        if vcpus == 1:
            accel += ["-icount", "shift=0,sleep=off", "-rtc", "clock=vm"]
        cmdline = " ".join(filter(None, [
            f"console=ttyS0 quiet loglevel=3 panic=-1 tsc=reliable oracle.limit={limit_s}",
            image.KERNEL_CMDLINE.get(kernel), append]))
        cmd = ["qemu-system-x86_64", *accel, "-cpu", "max", "-m", "1024", "-smp", str(vcpus),
               "-nodefaults", "-no-reboot", "-display", "none", "-monitor", "none",
               "-serial", f"file:{t / 'serial.log'}", "-nic", "none",
               "-kernel", str(k / "vmlinuz"), "-initrd", str(initrd), "-append", cmdline,
               "-drive", f"file={disk},format=raw,if=virtio"]
        try:
            subprocess.run(cmd, check=True, capture_output=True, timeout=limit_s + 120)
        except subprocess.TimeoutExpired:
            raise GuestStopped(f"the guest did not finish within {limit_s + 120} s") from None
        except subprocess.CalledProcessError as e:
            raise OracleError(f"qemu failed: {e.stderr.decode(errors='replace').strip()}") from None
        serial = (t / "serial.log").read_text(errors="replace")
        if "oracle: job done" not in serial:
            raise GuestStopped("the guest stopped before its job was done: "
                               + " / ".join(serial.strip().splitlines()[-3:]))
        return _untar(disk)


def boot_retrying(kernel: str, vcpus: int, files: dict[str, bytes], limit_s: int,
                  append: str = "") -> dict[str, bytes]:
    """boot, again when the guest stops early, BOOTS times at most."""
    for _ in range(BOOTS - 1):
        try:
            return boot(kernel, vcpus, files, limit_s, append)
        except GuestStopped as e:
            print(f"oracle: {e}; booting again", flush=True)
    return boot(kernel, vcpus, files, limit_s, append)


def _untar(disk: Path) -> dict[str, bytes]:
    with open(disk, "rb") as f, tarfile.open(fileobj=f, mode="r:") as tar:
        return {m.name.removeprefix("./"): tar.extractfile(m).read()
                for m in tar.getmembers() if m.isfile()}
