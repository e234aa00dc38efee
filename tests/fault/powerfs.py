"""One radiusward-powerfs mount (tests/fault/powerfs/powerfs.cc): a disk
that loses what was not fsynced when its power goes off, and whose fsyncs
can be made slow. Used by power_fault_test.py and powerfs_test.py."""

import os
import shutil
import subprocess
import time


def find_binary(radiusward_binary):
    """$RW_POWERFS (ctest sets it), else the build tree next to radiusward."""
    if os.environ.get("RW_POWERFS"):
        return os.environ["RW_POWERFS"]
    build = os.path.dirname(os.path.abspath(radiusward_binary))
    for _ in range(4):
        candidate = os.path.join(build, "tests", "fault", "powerfs", "radiusward-powerfs")
        if os.path.exists(candidate):
            return candidate
        build = os.path.dirname(build)
    raise SystemExit("radiusward-powerfs not found: build it or set RW_POWERFS")


class PowerFs:
    def __init__(self, binary, state_dir, mountpoint, log_path=None):
        self.binary = binary
        self.state_dir = state_dir
        self.mountpoint = mountpoint
        self.log_path = log_path or state_dir.rstrip("/") + ".log"
        self.process = None
        self.fsync_delay_ms = 0
        os.makedirs(state_dir, exist_ok=True)
        os.makedirs(mountpoint, exist_ok=True)

    @property
    def control(self):
        return os.path.join(self.mountpoint, ".powerfs")

    def mount(self, timeout=10):
        """Starts the file system (a boot: nothing but the backing folder's
        durable contents), with the fsync delay last set."""
        assert self.process is None
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen([self.binary, self.state_dir, self.mountpoint],
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while not os.path.ismount(self.mountpoint):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"powerfs did not mount {self.mountpoint}: {self.log_tail()}")
            time.sleep(0.02)
        if self.fsync_delay_ms:
            self.set_fsync_delay_ms(self.fsync_delay_ms)

    def unmount(self):
        if self.process is None:
            return
        # Not os.path.ismount: with the power off, stat of the mount fails.
        if subprocess.run(["fusermount3", "-u", self.mountpoint], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", self.mountpoint], capture_output=True)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def remove(self):
        self.unmount()
        shutil.rmtree(self.state_dir, ignore_errors=True)
        shutil.rmtree(self.mountpoint, ignore_errors=True)

    def command(self, text):
        with open(self.control, "w") as f:
            f.write(text)

    def power_off(self, torn=False):
        """Freezes the disk (EIO from now on) and drops what was not durable."""
        self.command("off torn" if torn else "off")

    def power_on(self):
        self.command("on")

    def set_fsync_delay_ms(self, delay_ms):
        self.fsync_delay_ms = delay_ms
        self.command(f"fsync_delay_ms {delay_ms}")

    def counters(self):
        with open(self.control) as f:
            fields = (line.split() for line in f if line.strip())
            return {k: (int(v) if v.isdigit() else v) for k, v in fields}

    def sync_dir(self, path):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def log_tail(self, lines=20):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""
