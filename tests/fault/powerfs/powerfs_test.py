#!/usr/bin/python3
"""The semantics of radiusward-powerfs (docs/RELIABILITY.md, "Power loss and
slow disks"), on a real mount: what a power cut keeps and what it drops.

  - data fsynced survives; data written after the last fsync does not;
  - O_DSYNC and RWF_DSYNC writes are durable when they return;
  - a truncate or fallocate not followed by fsync is undone;
  - create, rename and unlink are undone unless their folder was fsynced,
    and a rename over an existing file brings the old file back;
  - a torn cut keeps whole sectors of the last unsynced write, fewer than
    it had, and nothing after them;
  - while off, every operation fails with EIO; after "on" it works again;
  - fsync_delay_ms makes fsync and O_DSYNC writes take that long, and a cut
    during a slow fsync fails it and drops its data.

Usage: powerfs_test.py RADIUSWARD_POWERFS_BINARY [--keep]"""

import errno
import os
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from powerfs import PowerFs  # noqa: E402


def write_file(path, data, sync=False, flags=0):
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | flags, 0o600)
    try:
        os.write(fd, data)
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def read(path):
    with open(path, "rb") as f:
        return f.read()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    root = tempfile.mkdtemp(prefix="rw-powerfs-test-")
    fs = PowerFs(binary, os.path.join(root, "state"), os.path.join(root, "mnt"))
    ok = False
    try:
        fs.mount()
        m = fs.mountpoint
        d = os.path.join(m, "d")
        os.mkdir(d)
        fs.sync_dir(m)

        # Data: the fsynced prefix survives, the rest is dropped.
        fd = os.open(os.path.join(d, "a"), os.O_CREAT | os.O_WRONLY, 0o600)
        os.write(fd, b"durable")
        os.fsync(fd)
        os.write(fd, b" volatile")
        assert read(os.path.join(d, "a")) == b"durable volatile", "unsynced data must be readable before the cut"
        os.close(fd)
        # O_DSYNC and RWF_DSYNC writes are durable as they return.
        write_file(os.path.join(d, "dsync"), b"dsync", flags=os.O_DSYNC)
        fd = os.open(os.path.join(d, "rwf"), os.O_CREAT | os.O_WRONLY, 0o600)
        os.pwritev(fd, [b"rwf-dsync"], 0, os.RWF_DSYNC)
        os.close(fd)
        # Size changes: a synced file truncated and extended without fsync.
        write_file(os.path.join(d, "t"), b"0123456789", sync=True)
        os.truncate(os.path.join(d, "t"), 4)
        fd = os.open(os.path.join(d, "f"), os.O_CREAT | os.O_WRONLY, 0o600)
        os.fsync(fd)
        os.posix_fallocate(fd, 0, 65536)
        assert os.fstat(fd).st_size == 65536
        os.close(fd)
        # The victim of a rename over it, made durable first.
        write_file(os.path.join(d, "old"), b"old", sync=True)
        fs.sync_dir(d)

        # Namespace changes after the last folder fsync.
        write_file(os.path.join(d, "new"), b"new", sync=True)
        write_file(os.path.join(d, "tmp"), b"replacement", sync=True)
        os.rename(os.path.join(d, "tmp"), os.path.join(d, "old"))
        os.unlink(os.path.join(d, "dsync"))
        assert read(os.path.join(d, "old")) == b"replacement"

        fs.power_off()
        try:
            os.listdir(d)
            raise AssertionError("listing must fail while the power is off")
        except OSError as e:
            assert e.errno == errno.EIO, e
        fs.power_on()

        names = sorted(os.listdir(d))
        assert names == ["a", "dsync", "f", "old", "rwf", "t"], names
        assert read(os.path.join(d, "a")) == b"durable", read(os.path.join(d, "a"))
        assert read(os.path.join(d, "dsync")) == b"dsync"
        assert read(os.path.join(d, "rwf")) == b"rwf-dsync"
        assert read(os.path.join(d, "t")) == b"0123456789", read(os.path.join(d, "t"))
        assert os.stat(os.path.join(d, "f")).st_size == 0
        assert read(os.path.join(d, "old")) == b"old"
        counters = fs.counters()
        assert counters["power_cuts"] == 1 and counters["undo_failures"] == 0, counters
        assert counters["dropped_writes"] >= 1, counters

        # The same changes survive once made durable.
        write_file(os.path.join(d, "new"), b"new", sync=True)
        os.rename(os.path.join(d, "a"), os.path.join(d, "a2"))
        fs.sync_dir(d)
        fs.power_off()
        fs.power_on()
        assert sorted(os.listdir(d)) == ["a2", "dsync", "f", "new", "old", "rwf", "t"], os.listdir(d)
        assert read(os.path.join(d, "new")) == b"new"

        # Torn: of 4096 unsynced bytes at 512, whole sectors survive, not all.
        fd = os.open(os.path.join(d, "new"), os.O_WRONLY)
        os.pwrite(fd, b"x" * 4096, 512)
        os.close(fd)
        fs.power_off(torn=True)
        fs.power_on()
        data = read(os.path.join(d, "new"))
        kept = len(data) - 512
        assert data[:3] == b"new" and 0 < kept < 4096 and kept % 512 == 0, (len(data), data[:8])
        assert data[512:] == b"x" * kept
        assert fs.counters()["torn_writes"] == 1

        # Slow disk: fsync and O_DSYNC writes take the delay.
        fs.set_fsync_delay_ms(200)
        started = time.monotonic()
        write_file(os.path.join(d, "slow"), b"slow", sync=True)
        write_file(os.path.join(d, "slow-dsync"), b"slow", flags=os.O_DSYNC)
        elapsed = time.monotonic() - started
        assert 0.38 <= elapsed < 3, f"two slow syncs took {elapsed:.3f} s"
        # A cut during a slow fsync fails it and drops its data.
        fs.sync_dir(d)
        failure = []

        def slow_sync():
            fd = os.open(os.path.join(d, "slow"), os.O_WRONLY)
            try:
                os.pwrite(fd, b"changed", 0)
                os.fsync(fd)
            except OSError as e:
                failure.append(e.errno)
            finally:
                os.close(fd)

        thread = threading.Thread(target=slow_sync)
        thread.start()
        time.sleep(0.1)
        fs.power_off()
        thread.join()
        fs.power_on()
        fs.set_fsync_delay_ms(0)
        assert failure == [errno.EIO], failure
        assert read(os.path.join(d, "slow")) == b"slow"
        print("powerfs semantics: ok;", fs.counters())
        ok = True
    finally:
        fs.unmount()
        if ok and "--keep" not in sys.argv:
            fs.remove()
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {root}")


if __name__ == "__main__":
    main()
