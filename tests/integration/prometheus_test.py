#!/usr/bin/python3
"""A real Prometheus (Debian's `prometheus`) scrapes a running deployment:
three members and a gateway on loopback with cluster TLS, each with its
admin API on TCP as well (admin_listen, admin_token_file: a bearer token,
docs/admin_api.md "Transports"). Authentication and accounting traffic go
through the gateway with `radiusward bench run`; then the series are
queried back through Prometheus's HTTP API: every target up, exactly one
ready leader, the gateway's reply latency histograms and the leader's
commit latency and batch-size histograms counting the traffic, the
resident memory of each process. The TCP admin API refuses a request
without the token.

The series by NAS client (docs/admin_api.md "/metrics"): a reload adds a
second client whose shortname has a double quote, a backslash, a line feed,
a UTF-8 letter and a byte that is not UTF-8; the test sends it a known
number of accepted, rejected and accounted requests and of requests that
must be dropped, and reads each count back through Prometheus under the
label as escaped. The first client's counts survive the reload unchanged,
no counter resets, the clients' series add up to the gateway's totals, and
a reload that removes the second client takes its series off /metrics.
  tests/integration/prometheus_test.py RADIUSWARD_BINARY"""

import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fault"))
sys.path.insert(0, os.path.join(HERE, "..", "support"))
sys.path.insert(0, os.path.join(HERE, "..", "interop"))
from cluster_fixture import Cluster  # noqa: E402
from ports import free_port  # noqa: E402
from radiusward_fixture import (ACCESS_ACCEPT, ACCESS_REJECT, ACCESS_REQUEST, ACCOUNTING_RESPONSE,  # noqa: E402
                                ACCT_SESSION_ID, ACCT_STATUS_TYPE, NAS_IP_ADDRESS, USER_NAME, USER_PASSWORD,
                                build_accounting_request, build_request, exchange, hide_password,
                                verify_response)

if len(sys.argv) < 2:
    sys.exit("usage: prometheus_test.py RADIUSWARD_BINARY")
BINARY = os.path.abspath(sys.argv[1])
TOKEN = "prometheus-test-token-0123456789"
USERS = 10


def http_get(url, token=None, timeout=5):
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(request, timeout=timeout) as answer:
        return answer.status, answer.read().decode()


class Prometheus:
    """Debian's prometheus scraping `targets` every second, with its data in
    `root`, its web API on a free loopback port."""

    def __init__(self, root, targets, token_file):
        self.port = free_port()
        config = os.path.join(root, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
                    "scrape_configs:\n  - job_name: radiusward\n"
                    f"    authorization: {{credentials_file: {token_file}}}\n"
                    f"    static_configs:\n      - targets: [{', '.join(targets)}]\n")
        self.log = open(os.path.join(root, "prometheus.log"), "wb")
        self.process = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={os.path.join(root, 'tsdb')}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def query(self, expression):
        """The result vector of an instant query, [] on any failure."""
        url = f"http://127.0.0.1:{self.port}/api/v1/query?" + urllib.parse.urlencode({"query": expression})
        try:
            _, body = http_get(url)
        except (OSError, urllib.error.URLError):
            return []
        answer = json.loads(body)
        return answer["data"]["result"] if answer.get("status") == "success" else []

    def wait_for(self, what, expression, check, timeout=90):
        deadline = time.monotonic() + timeout
        result = []
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError("prometheus exited")
            result = self.query(expression)
            if result and check(result):
                return result
            time.sleep(0.5)
        raise AssertionError(f"timed out waiting for {what}: {expression} gave {result}")

    def close(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


def values(result):
    return [float(sample["value"][1]) for sample in result]


# The second client: its shortname as written in clients.conf (docs/users_and_clients.md
# "Common syntax": \" \\ \n and octal escapes), and the label Prometheus must hold for it:
# the same text, with the byte that is not UTF-8 (\377) replaced by U+FFFD.
SECOND_SOURCE = "127.0.0.2"
SECOND_SECRET = b"second-secret"
SECOND_SHORTNAME = r'"nas \"two\" \\ caf\303\251\n\377"'
SECOND_LABEL = 'nas "two" \\ caf\u00e9\n\ufffd'
# What the test sends from the second client.
ACCEPTS, REJECTS, RESPONSES, MISSING_MA, BAD_AUTHENTICATOR = 7, 3, 4, 2, 5


def clients_conf(cluster, with_second):
    text = ("client localhost {\n  ipaddr = 127.0.0.1\n"
            f"  secret = {cluster.secret}\n  shortname = localhost\n"
            "  require_message_authenticator = no\n}\n")
    if with_second:
        text += (f"client second {{\n  ipaddr = {SECOND_SOURCE}\n  secret = {SECOND_SECRET.decode()}\n"
                 f"  shortname = {SECOND_SHORTNAME}\n}}\n")
    with open(os.path.join(cluster.root, "clients.conf"), "w") as f:
        f.write(text)
    assert cluster.ctl("gateway", "reload") is not None, "the reload was refused"


def access_request(user, password, message_authenticator=True):
    authenticator = os.urandom(16)
    attributes = [(USER_NAME, user.encode()),
                  (USER_PASSWORD, hide_password(password.encode(), SECOND_SECRET, authenticator))]
    return build_request(ACCESS_REQUEST, random.randrange(256), attributes, secret=SECOND_SECRET,
                         authenticator=authenticator, message_authenticator=message_authenticator)


def send_as_second_client(cluster):
    """Sends the second client's requests from its address; every one that
    must be answered is, with its expected code."""
    def answered(port, request, code):
        reply = exchange(port, request, source=SECOND_SOURCE, timeout=10)
        assert reply is not None, "no answer"
        assert verify_response(reply, request, SECOND_SECRET, require_message_authenticator=False)[0] == code

    for i in range(ACCEPTS):
        answered(cluster.auth_port, access_request(f"bench-user-{i}", f"bench-password-{i}"), ACCESS_ACCEPT)
    for i in range(REJECTS):
        answered(cluster.auth_port, access_request(f"bench-user-{i}", "wrong"), ACCESS_REJECT)
    for i in range(RESPONSES):
        attributes = [(USER_NAME, b"bench-user-0"), (ACCT_STATUS_TYPE, struct.pack("!I", 1)),
                      (ACCT_SESSION_ID, f"client-series-{i}".encode()),
                      (NAS_IP_ADDRESS, bytes([127, 0, 0, 2]))]
        answered(cluster.acct_port, build_accounting_request(random.randrange(256), attributes, SECOND_SECRET),
                 ACCOUNTING_RESPONSE)
    for i in range(MISSING_MA):
        request = access_request("bench-user-0", "bench-password-0", message_authenticator=False)
        assert exchange(cluster.auth_port, request, source=SECOND_SOURCE, timeout=1) is None
    for i in range(BAD_AUTHENTICATOR):
        attributes = [(USER_NAME, b"bench-user-0"), (ACCT_STATUS_TYPE, struct.pack("!I", 1)),
                      (ACCT_SESSION_ID, f"wrong-secret-{i}".encode())]
        request = build_accounting_request(random.randrange(256), attributes, b"not-the-secret")
        assert exchange(cluster.acct_port, request, source=SECOND_SOURCE, timeout=1) is None


def by_labels(result, **labels):
    """The values of the samples of `result` whose labels include `labels`."""
    return [float(sample["value"][1]) for sample in result
            if all(sample["metric"].get(k) == v for k, v in labels.items())]


def check_client_series(cluster, prometheus):
    """The series by NAS client, through a reload that adds a client and one
    that removes it (docs/admin_api.md "/metrics")."""
    accept = 'radiusward_gateway_client_requests_total{client="localhost",code="Access-Request",outcome="accept"}'
    page = cluster.metrics("gateway")
    before = page[accept]
    # Only localhost has sent so far: all the gateway's Access-Accepts are its.
    total = page['radiusward_gateway_requests_total{code="Access-Request",outcome="accept"}']
    assert before == total > 0, f"localhost's Access-Accepts: {before}, the gateway's: {total}"
    clients_conf(cluster, with_second=True)
    send_as_second_client(cluster)
    expected = {("Access-Request", "accept"): ACCEPTS, ("Access-Request", "reject"): REJECTS,
                ("Accounting-Request", "response"): RESPONSES, ("Status-Server", "answered"): 0}
    for (code, outcome), count in expected.items():
        prometheus.wait_for(f"the second client's {code} {outcome} count", "radiusward_gateway_client_requests_total",
                            lambda r: by_labels(r, client=SECOND_LABEL, code=code, outcome=outcome) == [count])
    for reason, count in (("missing_message_authenticator", MISSING_MA),
                          ("bad_request_authenticator", BAD_AUTHENTICATOR)):
        prometheus.wait_for(f"the second client's {reason} drops", "radiusward_gateway_client_drops_total",
                            lambda r: by_labels(r, client=SECOND_LABEL, reason=reason) == [count])
    # localhost counted on across the reload, and sent nothing since.
    prometheus.wait_for("localhost's count, unchanged by the reload", "radiusward_gateway_client_requests_total",
                        lambda r: by_labels(r, client="localhost", code="Access-Request", outcome="accept") == [before])
    prometheus.wait_for("no counter reset", "resets(radiusward_gateway_client_requests_total[10m])",
                        lambda r: len(r) == 10 and max(values(r)) == 0)
    # Summed over clients, the answers are the gateway's.
    totals = prometheus.query("radiusward_gateway_requests_total")
    sums = prometheus.query("sum without (client) (radiusward_gateway_client_requests_total)")
    for sample in totals:
        code, outcome = sample["metric"]["code"], sample["metric"]["outcome"]
        assert by_labels(sums, code=code, outcome=outcome) == [float(sample["value"][1])], (code, outcome, sums)
    clients_conf(cluster, with_second=False)
    page = cluster.ctl("gateway", "metrics")
    assert "nas \\\"two" not in page, "a removed client's series stays"
    assert cluster.metrics("gateway")[accept] == before
    print(f"client series: localhost {before:.0f} accepts kept across two reloads; "
          f"{SECOND_LABEL!r} counted exactly")


def main():
    if shutil.which("prometheus") is None:
        sys.exit("prometheus is not installed (scripts/install-deps installs it)")
    root = tempfile.mkdtemp(prefix="rw-prometheus-")
    users = os.path.join(root, "bench-users")
    with open(users, "w") as f:
        for i in range(USERS + 1):
            f.write(f'bench-user-{i} Cleartext-Password := "bench-password-{i}"\n')
    token_file = os.path.join(root, "admin.token")
    with open(token_file, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(token_file, 0o600)
    cluster = Cluster(BINARY, root, members=3, gateways=1, users=users)
    # Each process's admin API on its own TCP port too (docs/configuration.md).
    admin_ports = {}
    for name in [f"member-{i}" for i in cluster.ids] + cluster.gateways:
        admin_ports[name] = free_port()
        with open(cluster.config_path(name), "a") as f:
            f.write(f"admin_listen: 127.0.0.1:{admin_ports[name]}\nadmin_token_file: {token_file}\n")
    prometheus = None
    ok = False
    try:
        leader = cluster.start_ready()
        # Without the token the TCP admin API answers 401.
        try:
            http_get(f"http://127.0.0.1:{admin_ports['gateway']}/metrics")
            raise AssertionError("the TCP admin API answered without a token")
        except urllib.error.HTTPError as error:
            assert error.code == 401, error.code
        status, body = http_get(f"http://127.0.0.1:{admin_ports['gateway']}/metrics", TOKEN)
        assert status == 200 and "radiusward_gateway_reply_latency_seconds_bucket" in body, body[:500]

        prometheus = Prometheus(root, [f"127.0.0.1:{port}" for port in admin_ports.values()], token_file)
        # Traffic: Access-Requests (PAP) and accounting through the gateway.
        common = ["--target", f"127.0.0.1:{cluster.auth_port}", "--acct-target", f"127.0.0.1:{cluster.acct_port}",
                  "--secret", cluster.secret, "--rate", "50", "--duration-s", "3", "--timeout-ms", "2000",
                  "--retries", "2", "--users", f"count:{USERS}", "--no-require-message-authenticator"]
        for scenario in ("pap", "acct"):
            done = subprocess.run([BINARY, "bench", "run", "--scenario", scenario] + common,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, f"bench {scenario}: {done.stdout}{done.stderr}"

        prometheus.wait_for("every target up", "up", lambda r: len(r) == 4 and all(v == 1 for v in values(r)))
        result = prometheus.wait_for("one ready leader", "radiusward_member_leader",
                                     lambda r: len(r) == 3 and sorted(values(r)) == [0, 0, 1])
        leader_instance = [s["metric"]["instance"] for s in result if float(s["value"][1]) == 1][0]
        assert leader_instance == f"127.0.0.1:{admin_ports[f'member-{leader}']}", (leader_instance, leader)
        for listener in ("authentication", "accounting"):
            prometheus.wait_for(f"{listener} replies in the latency histogram",
                                f'radiusward_gateway_reply_latency_seconds_count{{listener="{listener}"}}',
                                lambda r: values(r)[0] >= 100)
            # The buckets make a quantile: finite, under the bench's timeout.
            quantile = prometheus.wait_for(
                f"a {listener} latency quantile",
                f'histogram_quantile(0.99, radiusward_gateway_reply_latency_seconds_bucket{{listener="{listener}"}})',
                lambda r: 0 < values(r)[0] < 2)
            print(f"{listener} p99 reply latency: {values(quantile)[0] * 1000:.2f} ms")
        prometheus.wait_for("commits in the leader's commit latency histogram",
                            "radiusward_member_commit_latency_seconds_count",
                            lambda r: max(values(r)) >= 1)
        prometheus.wait_for("records in the leader's batch-size histogram",
                            "radiusward_member_submit_records_sum", lambda r: max(values(r)) >= 100)
        prometheus.wait_for("accounting answered", 'radiusward_gateway_accounting_total{event="answered"}',
                            lambda r: values(r)[0] >= 100)
        prometheus.wait_for("resident memory of every process", "process_resident_memory_bytes",
                            lambda r: len(r) == 4 and all(v > 1 << 20 for v in values(r)))
        prometheus.wait_for("the held bound", "radiusward_member_held_records_max",
                            lambda r: len(r) == 3 and all(v > 0 for v in values(r)))
        check_client_series(cluster, prometheus)
        ok = True
        print("prometheus_test: ok")
    finally:
        if prometheus is not None:
            prometheus.close()
            if not ok:
                with open(os.path.join(root, "prometheus.log"), errors="replace") as f:
                    print("--- prometheus log tail ---\n" + f.read()[-3000:])
        cluster.finish(ok)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
