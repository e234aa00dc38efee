"""The fault suite's cluster with a real network between its processes
(docs/RELIABILITY.md, "Partitions"): every member, every gateway and the
load generator (the NAS) run in a network namespace of their own, each with
one veth link to a bridge in a hub namespace and its own address in
10.77.<run>.0/24. Faults are nftables rules and tc qdiscs inside a
process's namespace, so a partition drops real packets of real TCP
connections, and healing it lets those connections recover on their own.

Nothing touches the root namespace: the bridge lives in the hub, no
namespace has a default route, so no packet of a test can leave the
machine. Every name carries the test's pid; `Network.teardown` deletes the
namespaces (which deletes the bridge and the links) on every exit path, and
`sweep_stale` removes what a run killed with SIGKILL left behind."""

import atexit
import os
import re
import signal
import subprocess
import sys

from cluster_fixture import Cluster

PREFIX = "rwp"  # every namespace of this fixture: rwp<pid>-<name>
TABLE = "rwfault"


class Skip(Exception):
    """The kernel lacks what a scenario needs (sch_netem)."""


def run(*command, check=True, input=None):
    result = subprocess.run(list(command), capture_output=True, text=True, input=input, timeout=30)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {result.stderr.strip()}")
    return result


def sweep_stale():
    """Deletes the namespaces of earlier runs whose test process is gone,
    after killing the processes still running in them (a member started in
    a namespace outlives a test killed with SIGKILL)."""
    listing = run("ip", "netns", "list", check=False).stdout
    for line in listing.splitlines():
        match = re.match(rf"({PREFIX}(\d+)-\S+)", line)
        if not match or os.path.exists(f"/proc/{match.group(2)}"):
            continue
        delete_namespace(match.group(1))


def delete_namespace(namespace):
    """Kills what still runs in `namespace`, then deletes it (with its end
    of every veth link, and the bridge when it is the hub)."""
    for pid in run("ip", "netns", "pids", namespace, check=False).stdout.split():
        try:
            os.kill(int(pid), signal.SIGKILL)
        except ProcessLookupError:
            pass
    run("ip", "netns", "del", namespace, check=False)


class Network:
    """A hub namespace with a bridge, and one namespace per host name, each
    linked to the bridge with its own address."""

    def __init__(self, names):
        sweep_stale()
        self.pid = os.getpid()
        # The third octet only has to differ between runs that overlap; the
        # namespaces never share a routing table, so even equal ones could
        # not collide, but distinct ones keep packet captures readable.
        self.subnet = f"10.77.{self.pid % 250 + 1}"
        self.hub = f"{PREFIX}{self.pid}-hub"
        self.hosts = {}  # name -> address
        self.namespaces = {}  # name -> namespace
        self.torn_down = False
        atexit.register(self.teardown)
        for signum in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, lambda number, frame: sys.exit(128 + number))
        run("ip", "netns", "add", self.hub)
        run("ip", "-n", self.hub, "link", "add", "br0", "type", "bridge")
        run("ip", "-n", self.hub, "link", "set", "br0", "up")
        for number, name in enumerate(names, start=2):
            self._add_host(name, f"{self.subnet}.{number}", f"h{number}")

    def _add_host(self, name, address, link):
        namespace = f"{PREFIX}{self.pid}-{name}"
        run("ip", "netns", "add", namespace)
        self.namespaces[name] = namespace
        run("ip", "-n", self.hub, "link", "add", link, "type", "veth", "peer", "name", "eth0", "netns", namespace)
        run("ip", "-n", self.hub, "link", "set", link, "master", "br0", "up")
        run("ip", "-n", namespace, "addr", "add", f"{address}/24", "dev", "eth0")
        run("ip", "-n", namespace, "link", "set", "eth0", "up")
        run("ip", "-n", namespace, "link", "set", "lo", "up")
        # Policy accept: the chains exist so that faults are single rules
        # added and flushed without touching anything else.
        run("ip", "netns", "exec", namespace, "nft", "-f", "-", input=(
            f"table inet {TABLE} {{\n"
            f"  chain in {{ type filter hook input priority 0; policy accept; }}\n"
            f"  chain out {{ type filter hook output priority 0; policy accept; }}\n"
            "}\n"))
        self.hosts[name] = address

    def exec_prefix(self, name):
        return ["ip", "netns", "exec", self.namespaces[name]]

    def _apply(self, rules):
        """Adds (name, chain, rule) rules, one `nft -f` per namespace, so a
        partition takes effect at once rather than link by link."""
        by_name = {}
        for name, chain, rule in rules:
            by_name.setdefault(name, []).append(f"add rule inet {TABLE} {chain} {rule}\n")
        for name, lines in by_name.items():
            run("ip", "netns", "exec", self.namespaces[name], "nft", "-f", "-", input="".join(lines))

    @staticmethod
    def _one_way(source_name, source, destination_name, destination):
        return [(source_name, "out", f"ip daddr {destination} drop"),
                (destination_name, "in", f"ip saddr {source} drop")]

    def drop_one_way(self, source, destinations):
        """Every packet from `source` to each of `destinations` is dropped,
        on the way out of `source` and on the way into the destination; the
        reverse direction is untouched."""
        rules = []
        for destination in destinations:
            rules += self._one_way(source, self.hosts[source], destination, self.hosts[destination])
        self._apply(rules)

    def cut(self, a, b):
        """No packet between `a` and `b` in either direction."""
        self.isolate(a, [b])

    def isolate(self, name, from_names):
        """No packet between `name` and any of `from_names`."""
        rules = []
        for other in from_names:
            rules += self._one_way(name, self.hosts[name], other, self.hosts[other])
            rules += self._one_way(other, self.hosts[other], name, self.hosts[name])
        self._apply(rules)

    def random_loss(self, names, percent):
        """Each of `names` drops `percent` % of the packets it sends, drawn
        per packet (nftables numgen: loss without sch_netem)."""
        self._apply([(name, "out", f"numgen random mod 100 < {percent} drop") for name in names])

    def netem(self, name, delay_ms, jitter_ms=0, loss_percent=0):
        """Delay (and loss) on everything `name` sends, with tc netem; Skip
        when the kernel has no sch_netem."""
        command = ["ip", "netns", "exec", self.namespaces[name], "tc", "qdisc", "replace", "dev", "eth0", "root",
                   "netem", "delay", f"{delay_ms}ms"]
        if jitter_ms:
            command += [f"{jitter_ms}ms", "distribution", "normal"]
        if loss_percent:
            command += ["loss", f"{loss_percent}%"]
        result = run(*command, check=False)
        if result.returncode != 0:
            if "unknown" in result.stderr.lower():
                raise Skip(f"the kernel has no sch_netem ({result.stderr.strip()})")
            raise RuntimeError(f"{' '.join(command)}: {result.stderr.strip()}")

    def heal(self):
        """Removes every rule and qdisc a fault added."""
        for name, namespace in self.namespaces.items():
            run("ip", "netns", "exec", namespace, "nft", "flush", "table", "inet", TABLE)
            run("ip", "netns", "exec", namespace, "tc", "qdisc", "del", "dev", "eth0", "root", check=False)

    def teardown(self):
        if self.torn_down:
            return
        self.torn_down = True
        for namespace in list(self.namespaces.values()) + [self.hub]:
            delete_namespace(namespace)


def netem_available():
    """Whether `tc qdisc add ... netem` works here (it needs sch_netem),
    tried in a throwaway namespace."""
    namespace = f"{PREFIX}{os.getpid()}-probe"
    run("ip", "netns", "add", namespace)
    try:
        return run("ip", "netns", "exec", namespace, "tc", "qdisc", "add", "dev", "lo", "root", "netem", "delay",
                   "1ms", check=False).returncode == 0
    finally:
        run("ip", "netns", "del", namespace, check=False)


class NetnsCluster(Cluster):
    """A Cluster whose processes run in the namespaces of a Network: the
    configs name each process's namespace address instead of 127.0.0.1 (the
    same ports), the gateway's client is the NAS namespace's address, and
    the load generator runs in the NAS namespace."""

    NAS = "nas"

    def __init__(self, binary, root, **kwargs):
        gateways = kwargs.get("gateways", 1)
        names = [f"member-{i}" for i in range(1, kwargs.get("members", 3) + 1)]
        names += ["gateway"] if gateways == 1 else [f"gateway-{k}" for k in range(1, gateways + 1)]
        self.net = Network([self.NAS] + names)
        super().__init__(binary, root, **kwargs)

    def _write_configs(self):
        """Cluster's configs, with every loopback address replaced by the
        owner's namespace address. Rewritten rather than written anew so
        that what other scenarios add to Cluster's configs is kept here."""
        super()._write_configs()
        replacements = []
        for i in self.ids:
            address = self.net.hosts[f"member-{i}"]
            replacements += [(f"127.0.0.1:{self.raft[i]}", f"{address}:{self.raft[i]}"),
                             (f"127.0.0.1:{self.submission[i]}", f"{address}:{self.submission[i]}")]
        for name in [f"member-{i}" for i in self.ids] + self.gateways:
            own = [("listen: [127.0.0.1]", f"listen: [{self.net.hosts[name]}]")]
            self._rewrite(self.config_path(name), replacements + own)
        self._rewrite(os.path.join(self.root, "clients.conf"),
                      [("ipaddr = 127.0.0.1", f"ipaddr = {self.net.hosts[self.NAS]}")])

    @staticmethod
    def _rewrite(path, replacements):
        with open(path) as f:
            text = f.read()
        for old, new in replacements:
            text = text.replace(old, new)
        # A loopback address left over would bind or connect inside the
        # process's own namespace and quietly bypass every fault.
        assert "127.0.0.1" not in text, f"{path} still names 127.0.0.1:\n{text}"
        with open(path, "w") as f:
            f.write(text)

    def start(self, name):
        saved = self.prefix
        self.prefix = self.net.exec_prefix(name) + saved
        try:
            super().start(name)
        finally:
            self.prefix = saved

    def load(self, rate, duration_s, acked_log, report, timeout_ms=1000, retries=4):
        """The load generator in the NAS namespace, aimed at the first
        gateway's address."""
        return super().load(rate, duration_s, acked_log, report, timeout_ms=timeout_ms, retries=retries,
                            target_host=self.net.hosts[self.gateways[0]],
                            exec_prefix=self.net.exec_prefix(self.NAS))

    def finish(self, ok, keep=False, remove=True):
        try:
            super().finish(ok, keep, remove)
        finally:
            self.net.teardown()
