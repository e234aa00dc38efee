"""The EAP phases of `make bench` (docs/benchmarking.md "EAP"), imported by
scripts/run-bench and by the tests:

  eap        EAP-TLS and PEAP-MSCHAPv2 authentications per second at the
             ceiling (`radiusward bench eap --ceiling`: step, then bisect)
  bootstorm  N devices start EAP-TLS at once (`radiusward bench eap --count
             N --rate 0`): time until all are authenticated, p99 and max per
             device, retransmissions

against FreeRADIUS 3.2's rlm_eap and, when the binary serves EAP-TLS and
PEAP, radiusward, with the same certificates (scripts/eap-bench-certs, EC
P-256), TLS version and fragment size, in the same run.
"""

import json
import os
import shutil
import signal
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import bench_sql  # noqa: E402  (admin_get: the admin API without ctl)
CLIENT_CN = "bench-device"  # The subject CN of scripts/eap-bench-certs's client certificate.


class Setup:
    """What the phases share with run-bench: how to start a process pinned
    and niced (prefix, own_autogroup), where the generator runs, the secret,
    the bench users (`name password` list and a users file), and the env()
    of run-bench for the RW_BENCH_EAP_* knobs."""

    def __init__(self, binary, folder, secret, plain_users, users_file, clients_file, workers, server_prefix,
                 generator_prefix, own_autogroup, env, log, free_port):
        self.binary = binary
        self.clients_file = clients_file
        self.workers = workers
        self.folder = folder
        self.secret = secret
        self.plain_users = plain_users
        self.users_file = users_file
        self.server_prefix = server_prefix
        self.generator_prefix = generator_prefix
        self.own_autogroup = own_autogroup
        self.env = env
        self.log = log
        self.free_port = free_port
        self.radiusward_skipped = None  # Why radiusward was not measured, once the phases looked.

    @property
    def fragment(self):
        return int(self.env("EAP_FRAGMENT", 1000))

    @property
    def tls(self):
        return self.env("EAP_TLS", "1.2")


def certificates(folder):
    """The run's PKI: {ca, server_cert, server_key, client_cert, client_key}."""
    certs = os.path.join(folder, "eap-certs")
    subprocess.run([os.path.join(ROOT, "scripts", "eap-bench-certs"), certs], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return {"dir": certs, "ca": os.path.join(certs, "ca.pem"),
            "server_cert": os.path.join(certs, "server.pem"), "server_key": os.path.join(certs, "server.key"),
            "client_cert": os.path.join(certs, "client.pem"), "client_key": os.path.join(certs, "client.key")}


class EapServer:
    """A server under test: its process, port and log."""

    def __init__(self, name, args, port, folder, prefix, own_autogroup, admin_socket=None):
        self.name = name
        self.port = port
        self.admin_socket = admin_socket
        self.log_path = os.path.join(folder, name + "-eap.log")
        self.log = open(self.log_path, "w")
        self.process = subprocess.Popen(prefix + args, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        if own_autogroup:
            own_autogroup(self.process.pid)

    def pids(self):
        return [self.process.pid]

    def tail(self):
        with open(self.log_path) as f:
            return f.read()[-3000:]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def start_freeradius(folder, plain_users, secret, certs, fragment, tls, free_port, prefix=(), own_autogroup=None):
    """FreeRADIUS with rlm_eap (scripts/freeradius-bench-config AUTH_MODE eap)."""
    config = os.path.join(folder, "freeradius-eap")
    port, acct_port = free_port(), free_port()
    subprocess.run([os.path.join(ROOT, "scripts", "freeradius-bench-config"), config, plain_users, secret,
                    str(port), str(acct_port), "none", "eap", certs["dir"], str(fragment), tls], check=True,
                   stdout=subprocess.DEVNULL)
    return EapServer("freeradius", ["freeradius", "-f", "-d", config], port, folder, list(prefix), own_autogroup)


def radiusward_config(folder, certs, users_file, clients_file, fragment, tls):
    """The gateway's config for the EAP phases: `eap.methods: [tls, peap]`
    with the bench certificates in `tls:` (docs/configuration.md), the same
    fragment size and TLS version as FreeRADIUS."""
    path = os.path.join(folder, "gateway-eap.yaml")
    # EAP-TLS decides as the certificate's CN, which the users policy must
    # know (docs/authentication.md "EAP"): the bench users and the client
    # certificate's name, with no check items (FreeRADIUS's EAP-TLS asks
    # its users file nothing).
    eap_users = os.path.join(folder, "users-eap")
    shutil.copyfile(users_file, eap_users)
    with open(eap_users, "a") as f:
        f.write("%s\n" % CLIENT_CN)
    with open(path, "w") as f:
        f.write("users_file: %s\nclients_file: %s\n" % (eap_users, clients_file))
        f.write("tls:\n  cert: %s\n  key: %s\n  ca: %s\n" % (certs["server_cert"], certs["server_key"], certs["ca"]))
        f.write("eap:\n  methods: [tls, peap]\n  tls_fragment_octets: %d\n  tls_min_version: \"%s\"\n"
                "  tls_max_version: \"%s\"\n" % (fragment, tls, tls))
    return path


def radiusward_serves_eap_tls(binary, folder, certs, users_file, clients_file, fragment, tls, log):
    """Whether this binary's gateway takes that config (`radiusward check`):
    EAP-TLS and PEAP in the gateway (docs/authentication.md "EAP") are not
    in every build the bench runs against."""
    config = radiusward_config(folder, certs, users_file, clients_file, fragment, tls)
    done = subprocess.run([binary, "check", "--config", config], capture_output=True, text=True)
    if done.returncode == 0:
        return None
    why = (done.stderr or done.stdout).strip().replace(config, "gateway-eap.yaml")
    log("eap: radiusward refuses the EAP-TLS/PEAP config, so FreeRADIUS only:", why[-300:])
    return "`radiusward check` refuses `eap.methods: [tls, peap]` in this build: " + why.splitlines()[0][:200]


def start_server(name, setup, certs):
    if name == "radiusward":
        config = radiusward_config(setup.folder, certs, setup.users_file, setup.clients_file, setup.fragment,
                                   setup.tls)
        port = setup.free_port()
        admin = os.path.join(setup.folder, "gateway-eap.sock")
        server = EapServer("radiusward", [setup.binary, "gateway", "--config", config, "--auth-port", str(port),
                                          "--acct-port", str(setup.free_port()), "--listen", "127.0.0.1",
                                          "--workers", str(setup.workers), "--log-level", "warn",
                                          "--admin-socket", admin],
                           port, setup.folder, setup.server_prefix, setup.own_autogroup, admin)
    elif name == "freeradius":
        server = start_freeradius(setup.folder, setup.plain_users, setup.secret, certs, setup.fragment, setup.tls,
                                  setup.free_port, setup.server_prefix, setup.own_autogroup)
    else:
        raise ValueError("no EAP server " + name)
    try:
        wait_ready(setup, server, certs)
    except BaseException:
        server.stop()  # A server that never became ready is not left behind.
        raise
    return server


def udp_drops(port):
    """Datagrams the kernel dropped at the UDP sockets bound to `port` (its
    receive buffer full): what a burst cost before the server read it."""
    drops = 0
    with open("/proc/net/udp") as f:
        for line in f.readlines()[1:]:
            fields = line.split()
            if len(fields) >= 13 and int(fields[1].split(":")[1], 16) == port:
                drops += int(fields[-1])
    return drops


def eap_queue_full(server):
    """radiusward's drops at the EAP pool's queue bound (`eap_queue_full`,
    from its /metrics); None for a server without them."""
    if not server.admin_socket:
        return None
    body = bench_sql.admin_get(server.admin_socket, "/metrics") or b""
    found = re.search(rb'radiusward_gateway_drops_total\{reason="eap_queue_full"\} (\d+)', body)
    return int(found.group(1)) if found else None


def eap_args(binary, server, secret, certs, method, users, tls, fragment):
    args = [binary, "bench", "eap", "--target", "127.0.0.1:%d" % server.port, "--secret", secret,
            "--method", method, "--users", users, "--ca", certs["ca"], "--tls-version", tls,
            "--fragment-octets", str(fragment), "--label", server.name]
    if method == "tls":
        args += ["--cert", certs["client_cert"], "--key", certs["client_key"]]
    return args


def run_generator(args, out, prefix=(), own_autogroup=None, timeout=None, echo=False):
    """Runs `radiusward bench eap` and returns its JSON report; with `echo`
    its progress lines go to stderr as they come."""
    args = list(prefix) + args + ["--json", out]
    generator = subprocess.Popen(args, start_new_session=True, stderr=subprocess.PIPE, text=True)
    if own_autogroup:
        own_autogroup(generator.pid)
    if echo:
        lines = []
        for line in generator.stderr:
            sys.stderr.write(line)
            lines.append(line)
        generator.wait(timeout=timeout)
        stderr = "".join(lines)
    else:
        _, stderr = generator.communicate(timeout=timeout)
    if generator.returncode != 0:
        raise RuntimeError("bench eap failed with %d: %s" % (generator.returncode, stderr[-2000:]))
    with open(out) as f:
        return json.load(f)


def wait_ready(setup, server, certs, seconds=30):
    """Ready when one EAP-TLS authentication succeeds (FreeRADIUS reads its
    certificates and starts its threads before it answers)."""
    deadline = time.monotonic() + seconds
    out = os.path.join(setup.folder, "ready-%s.json" % server.name)
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError("%s exited with %d:\n%s" % (server.name, server.process.returncode, server.tail()))
        try:
            report = run_generator(eap_args(setup.binary, server, setup.secret, certs, "tls", "count:1", setup.tls,
                                            setup.fragment) + ["--count", "1", "--rate", "0", "--timeout-ms", "300",
                                                               "--retries", "0"], out, timeout=30)
            if report["accepted"] == 1:
                return
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        time.sleep(0.3)
    raise RuntimeError("%s on port %d did not authenticate EAP-TLS:\n%s" % (server.name, server.port, server.tail()))


def servers(setup, certs):
    names = setup.env("EAP_SERVERS", "radiusward freeradius").split()
    if "radiusward" in names:
        setup.radiusward_skipped = radiusward_serves_eap_tls(setup.binary, setup.folder, certs, setup.users_file,
                                                             setup.clients_file, setup.fragment, setup.tls, setup.log)
        if setup.radiusward_skipped:
            names.remove("radiusward")
    return names


def eap_phase(setup, out_dir):
    """The ceilings: for each server, EAP-TLS then PEAP-MSCHAPv2."""
    certs = certificates(setup.folder)
    results = []
    for name in servers(setup, certs):
        server = start_server(name, setup, certs)
        try:
            for method in setup.env("EAP_METHODS", "tls peap").split():
                out = os.path.join(out_dir, "eap-ceiling-%s-%s.json" % (name, method))
                args = eap_args(setup.binary, server, setup.secret, certs, method, setup.plain_users, setup.tls,
                                setup.fragment) + [
                    "--ceiling", "--duration-s", setup.env("EAP_STEP_S", 5),
                    "--start-rate", setup.env("EAP_START_RATE", 100), "--factor", setup.env("EAP_FACTOR", 2),
                    "--max-rate", setup.env("EAP_MAX_RATE", 20000),
                    "--resolution", setup.env("EAP_RESOLUTION", 0.1), "--max-steps", setup.env("EAP_MAX_STEPS", 10),
                    "--concurrency", setup.env("EAP_CONCURRENCY", 512),
                    "--timeout-ms", setup.env("EAP_TIMEOUT_MS", 2000), "--retries", setup.env("EAP_RETRIES", 3),
                    "--p99-max-ms", setup.env("EAP_P99_MAX_MS", 1000), "--settle-ms", setup.env("EAP_SETTLE_MS", 2000)]
                for pid in server.pids():
                    args += ["--pid", str(pid)]
                setup.log("eap ceiling", name, method)
                report = run_generator(args, out, setup.generator_prefix, setup.own_autogroup, echo=True)
                results.append({"server": name, "method": method, "report": report})
        finally:
            server.stop()
    return {"conditions": conditions(setup), "results": results}


def bootstorm_phase(setup, out_dir):
    """For each N of RW_BENCH_BOOTSTORM_N and each server: N EAP-TLS
    supplicants started at once, every one in flight together."""
    certs = certificates(setup.folder)
    results = []
    for name in servers(setup, certs):
        server = start_server(name, setup, certs)
        try:
            for n in [int(x) for x in setup.env("BOOTSTORM_N", "1000 5000").split()]:
                out = os.path.join(out_dir, "bootstorm-%s-%d.json" % (name, n))
                args = eap_args(setup.binary, server, setup.secret, certs, "tls", setup.plain_users, setup.tls,
                                setup.fragment) + [
                    "--count", str(n), "--rate", "0", "--concurrency", str(n),
                    "--timeout-ms", setup.env("BOOTSTORM_TIMEOUT_MS", 3000),
                    "--retries", setup.env("BOOTSTORM_RETRIES", 5)]
                for pid in server.pids():
                    args += ["--pid", str(pid)]
                setup.log("bootstorm", name, n)
                drops, queue_full = udp_drops(server.port), eap_queue_full(server)
                report = run_generator(args, out, setup.generator_prefix, setup.own_autogroup, echo=True)
                report["server_socket_drops"] = udp_drops(server.port) - drops
                if queue_full is not None:
                    report["server_eap_queue_full"] = (eap_queue_full(server) or 0) - queue_full
                results.append({"server": name, "devices": n, "report": report})
                time.sleep(float(setup.env("EAP_SETTLE_MS", 2000)) / 1000)
        finally:
            server.stop()
    return {"conditions": conditions(setup), "results": results}


def conditions(setup):
    return {"radiusward_skipped": setup.radiusward_skipped,
            "bootstorm_timeout_ms": int(setup.env("BOOTSTORM_TIMEOUT_MS", 3000)),
            "bootstorm_retries": int(setup.env("BOOTSTORM_RETRIES", 5)),
            "certificates": "EC P-256 (prime256v1), ECDSA-SHA256; a CA, the server's and one client certificate "
                            "made in the run by scripts/eap-bench-certs, the same files for both servers",
            "tls_version": setup.tls, "fragment_octets": setup.fragment,
            "session_resumption": "off (every authentication a full handshake)",
            "peap": "PEAPv0, inner EAP-MSCHAPv2, users' Cleartext-Password",
            "freeradius": "rlm_eap tls and peap (inner-tunnel: files, mschap), tls-common with the bench "
                          "certificates, cache off, thread pool 5..32",
            "radiusward": "`radiusward gateway --workers %s` with eap.methods [tls, peap], the bench certificates "
                          "in tls:, eap.pool_threads and peap_crypto_binding at their defaults (2; optional: the "
                          "supplicant answers the Crypto-Binding TLV over TLS 1.2, which FreeRADIUS does not "
                          "send)" % setup.workers}


def phases(setup, out_dir, only):
    out = {}
    if "eap" in only:
        out["eap"] = eap_phase(setup, out_dir)
    if "bootstorm" in only:
        out["bootstorm"] = bootstorm_phase(setup, out_dir)
    return out


def remove(folder):
    shutil.rmtree(folder, ignore_errors=True)
