"""A real PostgreSQL 15 for whole-system tests, the Python twin of
src/io/postgres_server_for_test.h: Debian's initdb and pg_ctl in a temporary
folder on a free loopback port, `trust` authentication on 127.0.0.1, stopped
cleanly (pg_ctl stop -m fast) and removed by close(). initdb refuses to run as
root, so as root the binaries run as the `postgres` user on a folder chowned
to it. stop() and start() keep the port and the data, for outage tests.
`options` adds server options (`-c name=value ...`) after the fixture's."""

import os
import pwd
import shutil
import subprocess
import sys
import tempfile

BIN_DIR = os.environ.get("RW_PG_BINDIR", "/usr/lib/postgresql/15/bin")


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ports import free_port as _free_port  # noqa: E402


class PostgresServer:
    def __init__(self, parent=None, options=""):
        self.dir = tempfile.mkdtemp(prefix="rw-postgres-", dir=parent)
        self.options = options
        self.port = 0
        self.running = False
        self._user = None
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            self._user = (pw.pw_uid, pw.pw_gid)
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)
        self._run([f"{BIN_DIR}/initdb", "-D", self.data_dir, "-U", "postgres", "-A", "trust",
                   "-E", "UTF8", "--locale=C", "--no-instructions"])
        self.start()

    @property
    def data_dir(self):
        return os.path.join(self.dir, "data")

    def _demote(self):
        if self._user:
            os.setgid(self._user[1])
            os.setuid(self._user[0])

    def _run(self, argv, check=True):
        with open(os.path.join(self.dir, "pg_ctl.log"), "ab") as log:
            rc = subprocess.call(argv, stdout=log, stderr=log, preexec_fn=self._demote,
                                 cwd=self.dir)
        if check and rc != 0:
            raise RuntimeError(f"{argv[0]} failed ({rc}): {self.logs()}")
        return rc

    def logs(self):
        text = ""
        for name in ("pg_ctl.log", "server.log"):
            try:
                with open(os.path.join(self.dir, name), errors="replace") as f:
                    text += f.read()
            except OSError:
                pass
        return text

    def start(self):
        """Starts on a free port, or on the previous one after stop()."""
        for attempt in range(5):
            if not self.port or attempt > 0:
                self.port = _free_port()
            options = (f"-p {self.port} -c listen_addresses=127.0.0.1 "
                       f"-c unix_socket_directories={self.dir} "
                       "-c shared_buffers=16MB -c max_connections=40 " + self.options)
            if self._run([f"{BIN_DIR}/pg_ctl", "-D", self.data_dir, "-l",
                          os.path.join(self.dir, "server.log"), "-o", options, "-w", "-t", "60",
                          "start"], check=False) == 0:
                self.running = True
                return
        raise RuntimeError(f"pg_ctl start failed: {self.logs()}")

    def stop(self):
        self._run([f"{BIN_DIR}/pg_ctl", "-D", self.data_dir, "-m", "fast", "-w", "-t", "60",
                   "stop"], check=False)
        self.running = False

    def close(self):
        if self.running:
            self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def conninfo(self, database="postgres"):
        return (f"host=127.0.0.1 port={self.port} user=postgres dbname={database} "
                "connect_timeout=5")

    def psql(self, *arguments, database="postgres"):
        """Runs psql (ON_ERROR_STOP) and returns its standard output."""
        return subprocess.run(
            [f"{BIN_DIR}/psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1",
             "-p", str(self.port), "-U", "postgres", "-d", database, *arguments],
            check=True, capture_output=True, text=True).stdout


if __name__ == "__main__":
    with PostgresServer() as server:
        assert server.psql("-c", "select 6*7").strip() == "42"
        server.stop()
        server.start()
        assert server.psql("-c", "select 1").strip() == "1"
        print("postgres fixture ok on port", server.port)
