#!/usr/bin/python3
"""The Kubernetes manifests of deploy/kubernetes/ (docs/kubernetes.md) hold
together and hold configs the real binary accepts. No API server is needed:
`kubectl apply --dry-run=client` still asks one for its API groups, so the
structure is checked here from the YAML.

- every object has apiVersion, kind and metadata.name, and every selector
  matches the labels of the pods it is meant for;
- the StatefulSet runs 3 members, governed by a headless Service, one volume
  each mounted where the member configs put data_dir; its PodDisruptionBudget
  keeps a majority;
- each member's Service has a fixed ClusterIP, selects that one pod and
  serves the raft and submission ports; member id N+1 runs in pod N, and its
  config's raft address, the address book and the gateway's
  accounting.members are those ClusterIPs and ports;
- the gateways' UDP Service serves auth 1812 and acct 1813, equal to
  gateway.yaml's ports, without SNAT (externalTrafficPolicy Local);
- every probe is a command that exists: `radiusward` with a command line its
  parser accepts, or a script of the mounted ConfigMap that passes `sh -n`
  and calls only radiusward, radclient (the image's freeradius-utils) and
  shell built-ins;
- every mount names a volume, every path of a config lies under a mount,
  every container has memory requests and limits;
- each member config, rendered by the pods' own start.sh for pods 0..2, and
  the gateway config pass `radiusward check` with the TLS files of
  `radiusward certs` (the pod's paths moved under a temporary folder), and
  start.sh passes --recover-alone exactly once when the marker is there and
  waits while the hold file is there.

Usage: manifests_test.py RADIUSWARD_BINARY              checks deploy/kubernetes
       manifests_test.py RADIUSWARD_BINARY --self-test  proves that each check
                                                        fails on a broken copy
"""

import copy
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.environ.get("RW_SOURCE_ROOT") or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
MANIFESTS = os.path.join(ROOT, "deploy", "kubernetes")
MEMBERS = 3
RAFT_PORT_NAME, SUBMISSION_PORT_NAME = "raft", "submission"
# Paths of the pods that the configs name; the check moves them under a
# temporary folder.
POD_PREFIXES = ("/etc/radiusward/", "/var/lib/radiusward", "/run/radiusward")
# What the probe scripts may run besides shell built-ins.
SCRIPT_COMMANDS = {"radiusward", "radclient", "cat", "mv", "rm", "sync", "printf", "echo", "exec", "set", "exit",
                   "true", "false", "[", "sleep"}


def load(folder):
    """{(kind, name): object} of every YAML document in `folder`."""
    objects = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        with open(path) as f:
            for document in yaml.safe_load_all(f):
                if document is None:
                    continue
                kind = document.get("kind")
                name = (document.get("metadata") or {}).get("name")
                objects[(kind, name)] = document
    return objects


def get(objects, kind, name, problems):
    found = objects.get((kind, name))
    if found is None:
        problems.append(f"{kind} {name} is missing")
    return found


def selects(selector, labels):
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def named_port(container, name):
    for port in container.get("ports", []):
        if port.get("name") == name:
            return port
    return None


def host_port(text):
    host, _, port = text.rpartition(":")
    return host, int(port)


def check_objects(objects, problems):
    for (kind, name), document in objects.items():
        if not document.get("apiVersion") or not kind or not name:
            problems.append(f"an object lacks apiVersion, kind or metadata.name: {kind} {name}")


def check_members(objects, problems):
    """The StatefulSet, its Services and PDB, and the member configs'
    addresses. Returns {id: (clusterIP, raft port, submission port)}."""
    book = {}
    sts = get(objects, "StatefulSet", "radiusward-member", problems)
    config_map = get(objects, "ConfigMap", "radiusward-member", problems)
    if sts is None or config_map is None:
        return book
    spec = sts["spec"]
    if spec.get("replicas") != MEMBERS:
        problems.append(f"StatefulSet radiusward-member: replicas {spec.get('replicas')}, expected {MEMBERS}")
    if spec.get("podManagementPolicy") != "Parallel":
        problems.append("StatefulSet radiusward-member: podManagementPolicy must be Parallel (a member is ready "
                        "only once a leader exists, which takes a majority started)")
    labels = spec["template"]["metadata"].get("labels", {})
    if not selects(spec.get("selector", {}).get("matchLabels"), labels):
        problems.append("StatefulSet radiusward-member: selector does not match its pod labels")
    governing = get(objects, "Service", spec.get("serviceName"), problems)
    if governing is not None:
        if governing["spec"].get("clusterIP") != "None":
            problems.append(f"Service {spec.get('serviceName')}: the StatefulSet's Service must be headless")
        if not selects(governing["spec"].get("selector"), labels):
            problems.append(f"Service {spec.get('serviceName')}: selector does not match the member pods")
    container = spec["template"]["spec"]["containers"][0]
    raft_port, submission_port = named_port(container, RAFT_PORT_NAME), named_port(container, SUBMISSION_PORT_NAME)
    if raft_port is None or submission_port is None:
        problems.append("StatefulSet radiusward-member: container ports 'raft' and 'submission' are required")
        return book
    claims = [t["metadata"]["name"] for t in spec.get("volumeClaimTemplates", [])]
    mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts", [])}
    data_mounts = [mounts[c] for c in claims if c in mounts]
    if len(data_mounts) != 1:
        problems.append("StatefulSet radiusward-member: one volumeClaimTemplate mounted in the container is required")

    pdb = get(objects, "PodDisruptionBudget", "radiusward-member", problems)
    if pdb is not None:
        if not selects(pdb["spec"].get("selector", {}).get("matchLabels"), labels):
            problems.append("PodDisruptionBudget radiusward-member: selector does not match the member pods")
        unavailable = pdb["spec"].get("maxUnavailable")
        if not isinstance(unavailable, int) or MEMBERS - unavailable < MEMBERS // 2 + 1:
            problems.append(f"PodDisruptionBudget radiusward-member: maxUnavailable {unavailable} does not keep a "
                            f"majority of {MEMBERS}")

    for ordinal in range(MEMBERS):
        member_id = ordinal + 1
        pod = f"radiusward-member-{ordinal}"
        text = config_map["data"].get(f"member-{member_id}.yaml")
        if text is None:
            problems.append(f"ConfigMap radiusward-member: no member-{member_id}.yaml for pod {pod}")
            continue
        config = yaml.safe_load(text)
        if config.get("id") != member_id:
            problems.append(f"member-{member_id}.yaml: id {config.get('id')}, expected {member_id} (pod {pod})")
        if len(data_mounts) == 1 and not str(config.get("data_dir", "")).startswith(data_mounts[0]):
            problems.append(f"member-{member_id}.yaml: data_dir {config.get('data_dir')} is not on the volume "
                            f"mounted at {data_mounts[0]}")
        for key, port in (("raft_listen", raft_port), ("submission_listen", submission_port)):
            if key in config and host_port(config[key])[1] != port["containerPort"]:
                problems.append(f"member-{member_id}.yaml: {key} {config[key]} is not the container port "
                                f"{port['name']} {port['containerPort']}")
        service = get(objects, "Service", pod, problems)
        if service is None:
            continue
        s = service["spec"]
        ip = s.get("clusterIP")
        if not ip or ip == "None":
            problems.append(f"Service {pod}: a fixed clusterIP is required (it is member {member_id}'s raft address)")
        if not s.get("publishNotReadyAddresses"):
            problems.append(f"Service {pod}: publishNotReadyAddresses is required (members elect a leader before "
                            "any is ready)")
        pod_labels = dict(labels, **{"statefulset.kubernetes.io/pod-name": pod})
        if not selects(s.get("selector"), pod_labels) or s["selector"].get("statefulset.kubernetes.io/pod-name") != pod:
            problems.append(f"Service {pod}: selector must pick pod {pod} alone")
        ports = {p.get("targetPort"): p for p in s.get("ports", [])}
        for port in (raft_port, submission_port):
            served = ports.get(port["name"]) or ports.get(port["containerPort"])
            if served is None or served.get("protocol", "TCP") != "TCP":
                problems.append(f"Service {pod}: does not serve container port {port['name']} over TCP")
        if ip and RAFT_PORT_NAME in ports and SUBMISSION_PORT_NAME in ports:
            book[member_id] = (ip, ports[RAFT_PORT_NAME]["port"], ports[SUBMISSION_PORT_NAME]["port"])
            expected = f"{ip}:{ports[RAFT_PORT_NAME]['port']}"
            if config.get("raft_address") != expected:
                problems.append(f"member-{member_id}.yaml: raft_address {config.get('raft_address')}, expected "
                                f"{expected} (Service {pod})")

    for member_id in range(1, MEMBERS + 1):
        text = config_map["data"].get(f"member-{member_id}.yaml")
        if text is None:
            continue
        listed = {m.get("id"): m for m in yaml.safe_load(text).get("members", [])}
        if sorted(listed) != sorted(book) or len(book) != MEMBERS:
            problems.append(f"member-{member_id}.yaml: members lists ids {sorted(listed)}, the Services "
                            f"{sorted(book)}")
            continue
        for i, (ip, raft, submission) in book.items():
            if listed[i].get("raft") != f"{ip}:{raft}" or listed[i].get("submission") != f"{ip}:{submission}":
                problems.append(f"member-{member_id}.yaml: member {i} is {listed[i]}, Service radiusward-member-"
                                f"{i - 1} serves {ip}:{raft} and {ip}:{submission}")
    return book


def check_gateways(objects, book, problems):
    deployment = get(objects, "Deployment", "radiusward-gateway", problems)
    config_map = get(objects, "ConfigMap", "radiusward-gateway", problems)
    service = get(objects, "Service", "radiusward-radius", problems)
    if deployment is None or config_map is None:
        return
    spec = deployment["spec"]
    labels = spec["template"]["metadata"].get("labels", {})
    if not selects(spec.get("selector", {}).get("matchLabels"), labels):
        problems.append("Deployment radiusward-gateway: selector does not match its pod labels")
    if (spec.get("replicas") or 1) < 2:
        problems.append("Deployment radiusward-gateway: run two gateways at least, so that one answers while "
                        "the other restarts")
    config = yaml.safe_load(config_map["data"].get("gateway.yaml", "{}"))
    container = spec["template"]["spec"]["containers"][0]
    if service is not None:
        s = service["spec"]
        if not selects(s.get("selector"), labels):
            problems.append("Service radiusward-radius: selector does not match the gateway pods")
        if s.get("externalTrafficPolicy") != "Local":
            problems.append("Service radiusward-radius: externalTrafficPolicy must be Local (clients.conf needs "
                            "the NAS's source address)")
        served = {p.get("name"): p for p in s.get("ports", [])}
        for name, key, default in (("auth", "auth_port", 1812), ("acct", "acct_port", 1813)):
            port, target = served.get(name), named_port(container, name)
            if port is None or port.get("protocol") != "UDP" or port.get("port") != default:
                problems.append(f"Service radiusward-radius: {name} must be UDP port {default}")
            elif target is None or port.get("targetPort") not in (name, target["containerPort"]):
                problems.append(f"Service radiusward-radius: {name} does not reach a container port '{name}'")
            elif target["containerPort"] != config.get(key, default) or target.get("protocol") != "UDP":
                problems.append(f"gateway.yaml: {key} {config.get(key, default)} is not the container's UDP port "
                                f"{name} {target['containerPort']}")
    pdb = get(objects, "PodDisruptionBudget", "radiusward-gateway", problems)
    if pdb is not None and not selects(pdb["spec"].get("selector", {}).get("matchLabels"), labels):
        problems.append("PodDisruptionBudget radiusward-gateway: selector does not match the gateway pods")
    members = (config.get("accounting") or {}).get("members", [])
    listed = {m.get("id"): m.get("address") for m in members if isinstance(m, dict)}
    expected = {i: f"{ip}:{submission}" for i, (ip, _, submission) in book.items()}
    if listed != expected:
        problems.append(f"gateway.yaml: accounting.members {listed}, the member Services serve {expected}")


def probe_commands(container):
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        command = ((container.get(probe) or {}).get("exec") or {}).get("command")
        if command:
            yield probe, command
    command = (((container.get("lifecycle") or {}).get("preStop") or {}).get("exec") or {}).get("command")
    if command:
        yield "preStop", command
    yield "command", container.get("command") or []


def script_commands(text):
    """The first word of each simple command of a small POSIX sh script."""
    words = set()
    for line in text.splitlines():
        # Comments, arithmetic and case patterns are not commands.
        line = re.sub(r"\$\(\([^)]*\)\)", "0", line.strip())
        line = "" if line.startswith(("#", "*")) else re.sub(r"\s#.*", "", line)
        line = re.sub(r"^[^()]*\)\s*", "", line) if re.match(r"^[^()=]*\)", line) else line
        # Expansions and quoted words are arguments; radiusward may be named
        # through $RADIUSWARD (the test's stand-in).
        line = line.replace('"${RADIUSWARD:-radiusward}"', "radiusward")
        line = re.sub(r"\$\{[^}]*\}", "X", line)
        line = re.sub(r"\"[^\"]*\"|'[^']*'", "S", line)
        for part in re.split(r"\|\||&&|[|;{}()]|\$\(", line):
            part = part.strip()
            match = re.match(r"(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*([A-Za-z_./\[][^\s]*)", part)
            if not match or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", part) and " " not in part:
                continue
            word = match.group(1).rstrip(")")
            if word in ("if", "then", "else", "fi", "case", "esac", "in", "do", "done", "while", "for", "!"):
                continue
            words.add(word)
    return words


def check_pods(objects, binary, problems):
    image_packages = open(os.path.join(MANIFESTS, "Dockerfile")).read()
    for kind, name in (("StatefulSet", "radiusward-member"), ("Deployment", "radiusward-gateway")):
        workload = objects.get((kind, name))
        if workload is None:
            continue
        pod = workload["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        claims = {t["metadata"]["name"] for t in workload["spec"].get("volumeClaimTemplates", [])}
        for container in pod["containers"]:
            mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
            for path, volume in mounts.items():
                if volume not in volumes and volume not in claims:
                    problems.append(f"{kind} {name}: mount {path} names no volume '{volume}'")
            resources = container.get("resources") or {}
            if not (resources.get("requests") or {}).get("memory") or not (resources.get("limits") or {}).get("memory"):
                problems.append(f"{kind} {name}: memory requests and limits are required (docs/PERFORMANCE.md)")
            config_volume = next((volumes[v] for p, v in mounts.items() if p == "/etc/radiusward/config"
                                  and v in volumes), None)
            config_map = objects.get(("ConfigMap", ((config_volume or {}).get("configMap") or {}).get("name")))
            scripts = (config_map or {}).get("data", {})
            for where, command in probe_commands(container):
                check_command(f"{kind} {name} {where}", command, scripts, binary, image_packages, problems)
            if config_map:
                for key, text in scripts.items():
                    if key.endswith(".yaml"):
                        check_paths(f"ConfigMap {config_map['metadata']['name']} {key}", yaml.safe_load(text),
                                    mounts, problems)


def check_command(where, command, scripts, binary, image_packages, problems):
    if not command:
        problems.append(f"{where}: no command")
        return
    if command[0] == "radiusward":
        # A usage error exits 2; anything else means the parser took it (ctl
        # exits 1 when no process listens on the socket).
        result = subprocess.run([binary] + command[1:] + (["--help"] if command[1] in ("member", "gateway")
                                                          else []),
                                capture_output=True, text=True, timeout=30)
        if result.returncode == 2:
            problems.append(f"{where}: `{' '.join(command)}` is refused: {result.stderr.strip()}")
    elif command[0] == "/bin/sh" and len(command) == 2 and command[1].startswith("/etc/radiusward/config/"):
        key = os.path.basename(command[1])
        if key not in scripts:
            problems.append(f"{where}: {command[1]} is not a key of the mounted ConfigMap")
            return
        result = subprocess.run(["sh", "-n"], input=scripts[key], capture_output=True, text=True, timeout=30)
        if result.returncode != 0:
            problems.append(f"{where}: {key} is not valid sh: {result.stderr.strip()}")
        for word in sorted(script_commands(scripts[key]) - SCRIPT_COMMANDS):
            problems.append(f"{where}: {key} runs '{word}', which the image does not provide")
        if "radclient" in scripts[key] and "freeradius-utils" not in image_packages:
            problems.append(f"{where}: {key} runs radclient; the Dockerfile does not install freeradius-utils")
    elif command[0] != "sleep":
        problems.append(f"{where}: `{' '.join(command)}` is neither radiusward, a ConfigMap script nor sleep")


def check_paths(where, config, mounts, problems):
    def walk(value):
        if isinstance(value, dict):
            for v in value.values():
                yield from walk(v)
        elif isinstance(value, list):
            for v in value:
                yield from walk(v)
        elif isinstance(value, str) and value.startswith("/"):
            yield value
    for path in walk(config):
        if not any(path == m or path.startswith(m.rstrip("/") + "/") for m in mounts):
            problems.append(f"{where}: {path} is on no mounted volume")


def pod_paths(text, root):
    for prefix in POD_PREFIXES:
        text = text.replace(prefix, root + prefix)
    return text


def check_configs_with_binary(objects, binary, problems):
    """Each member config as the pods' start.sh renders it, and the gateway
    config, through `radiusward check`."""
    members = objects.get(("ConfigMap", "radiusward-member"))
    gateway = objects.get(("ConfigMap", "radiusward-gateway"))
    if members is None or gateway is None:
        return
    with tempfile.TemporaryDirectory(prefix="rw-k8s-") as root:
        config_dir = os.path.join(root, "etc/radiusward/config")
        tls = os.path.join(root, "etc/radiusward/tls")
        os.makedirs(config_dir)
        for path in ("etc/radiusward/db", "etc/radiusward/users", "var/lib/radiusward", "run/radiusward"):
            os.makedirs(os.path.join(root, path))
        made = subprocess.run([binary, "certs", "--dir", tls, "--members", str(MEMBERS), "--gateways", "k8s"],
                              capture_output=True, text=True, timeout=120)
        if made.returncode != 0:
            problems.append(f"radiusward certs failed: {made.stderr}")
            return
        shutil.copy(os.path.join(tls, "gateway-k8s.pem"), os.path.join(tls, "gateway.pem"))
        shutil.copy(os.path.join(tls, "gateway-k8s.key"), os.path.join(tls, "gateway.key"))
        shutil.copy(os.path.join(tls, "ca.pem"), os.path.join(root, "etc/radiusward/db/ca.pem"))
        shutil.copy(os.path.join(ROOT, "etc/demo/users"), os.path.join(root, "etc/radiusward/users/users"))
        shutil.copy(os.path.join(ROOT, "etc/demo/clients.conf"), os.path.join(root, "etc/radiusward/users/clients.conf"))
        for key, text in list(members["data"].items()) + list(gateway["data"].items()):
            with open(os.path.join(config_dir, key), "w") as f:
                f.write(pod_paths(text, root) if key.endswith(".yaml") else text)
        # The pods run `radiusward member --config F [--recover-alone]`; here
        # the same command line checks F instead and records the flags.
        fake = os.path.join(root, "radiusward")
        with open(fake, "w") as f:
            f.write('#!/bin/sh\n[ "$1" = member ] && [ "$2" = --config ] || exit 99\n'
                    'config=$3; shift 3; echo "flags: $*"\n'
                    f'exec {binary} check --member-config "$config"\n')
        os.chmod(fake, 0o755)
        data = os.path.join(root, "var/lib/radiusward")

        def start(ordinal, bootstrap="true"):
            env = dict(os.environ, HOSTNAME=f"radiusward-member-{ordinal}", RADIUSWARD=fake,
                       RADIUSWARD_CONFIG_DIR=config_dir, RADIUSWARD_RUN_DIR=os.path.join(root, "run/radiusward"),
                       RADIUSWARD_DATA=data, RADIUSWARD_BOOTSTRAP=bootstrap)
            return subprocess.run(["sh", os.path.join(config_dir, "start.sh")], env=env, capture_output=True,
                                  text=True, timeout=60)

        for ordinal in range(MEMBERS):
            result = start(ordinal)
            expected = f"member {ordinal + 1}, {MEMBERS} members, cluster TLS"
            if result.returncode != 0 or expected not in result.stdout:
                problems.append(f"pod radiusward-member-{ordinal}: start.sh with radiusward check: exit "
                                f"{result.returncode}: {result.stdout}{result.stderr}")
            rendered = open(os.path.join(root, "run/radiusward/member.yaml")).read()
            if "bootstrap: true" not in rendered:
                problems.append(f"start.sh: the rendered config lacks `bootstrap: true`:\n{rendered}")
        open(os.path.join(data, "recover-alone"), "w").close()
        first, second = start(2, "false"), start(2, "false")
        if "flags: --recover-alone" not in first.stdout or "--recover-alone" in second.stdout or \
                os.path.exists(os.path.join(data, "recover-alone")):
            problems.append(f"start.sh: --recover-alone must be passed once, when the marker exists:\n"
                            f"{first.stdout}{first.stderr}\n{second.stdout}{second.stderr}")
        # The hold file keeps the member from starting until it is removed.
        open(os.path.join(data, "hold"), "w").close()
        held = subprocess.Popen(["sh", os.path.join(config_dir, "start.sh")], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=dict(
                                    os.environ, HOSTNAME="radiusward-member-1", RADIUSWARD=fake,
                                    RADIUSWARD_CONFIG_DIR=config_dir,
                                    RADIUSWARD_RUN_DIR=os.path.join(root, "run/radiusward"), RADIUSWARD_DATA=data))
        time.sleep(1.5)
        still_held = held.poll() is None
        os.remove(os.path.join(data, "hold"))
        out, err = held.communicate(timeout=60)
        if not still_held or held.returncode != 0 or "member 2," not in out:
            problems.append(f"start.sh: the hold file must keep the member waiting, then let it start: "
                            f"held {still_held}, exit {held.returncode}: {out}{err}")
        if start(0, "yes").returncode != 2:
            problems.append("start.sh: RADIUSWARD_BOOTSTRAP=yes must be refused with exit 2")
        result = subprocess.run([binary, "check", "--config", os.path.join(config_dir, "gateway.yaml")],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            problems.append(f"gateway.yaml: radiusward check: exit {result.returncode}: {result.stdout}"
                            f"{result.stderr}")


def problems_of(objects, binary, with_binary=True):
    problems = []
    check_objects(objects, problems)
    book = check_members(objects, problems)
    check_gateways(objects, book, problems)
    check_pods(objects, binary, problems)
    if with_binary:
        check_configs_with_binary(objects, binary, problems)
    return problems


def set_in(objects, key, path, value):
    """A copy of `objects` with the value at `path` (keys and indexes) of
    object `key` replaced, or transformed when `value` is callable."""
    broken = copy.deepcopy(objects)
    node = broken[key]
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value(node[path[-1]]) if callable(value) else value
    return broken


def self_test(objects, binary):
    """Each broken copy must be caught, by the check meant for it."""
    sts, gw = ("StatefulSet", "radiusward-member"), ("Deployment", "radiusward-gateway")
    container = ["spec", "template", "spec", "containers", 0]
    breaks = {
        ("PDB lets two of three go", "does not keep a majority"): set_in(objects, ("PodDisruptionBudget", "radiusward-member"),
                                           ["spec", "maxUnavailable"], 2),
        ("five replicas", "replicas 5"): set_in(objects, sts, ["spec", "replicas"], 5),
        ("OrderedReady", "podManagementPolicy"): set_in(objects, sts, ["spec", "podManagementPolicy"], "OrderedReady"),
        ("Service on another port", "auth must be UDP port 1812"): set_in(objects, ("Service", "radiusward-radius"), ["spec", "ports", 0, "port"],
                                          1645),
        ("gateway port moved", "auth_port 1814"): set_in(objects, ("ConfigMap", "radiusward-gateway"), ["data", "gateway.yaml"],
                                     lambda t: t.replace("auth_port: 1812", "auth_port: 1814")),
        ("member Service's IP moved", "10.96.201.99"): set_in(objects, ("Service", "radiusward-member-1"), ["spec", "clusterIP"],
                                            "10.96.201.99"),
        ("member Service selects all", "alone"): set_in(objects, ("Service", "radiusward-member-2"), ["spec", "selector"],
                                             lambda s: {k: v for k, v in s.items() if "pod-name" not in k}),
        ("no headless Service", "headless"): set_in(objects, ("Service", "radiusward-members"), ["spec", "clusterIP"], ""),
        ("selector mismatch", "selector does not match"): set_in(objects, gw, ["spec", "selector", "matchLabels"], {"app": "other"}),
        ("probe of a missing subcommand", "is refused"): set_in(objects, sts, container + ["livenessProbe", "exec", "command"],
                                                ["radiusward", "ctl", "--socket", "/run/radiusward/admin.sock",
                                                 "alive"]),
        ("probe script missing", "missing.sh"): set_in(objects, sts, container + ["readinessProbe", "exec", "command"],
                                       ["/bin/sh", "/etc/radiusward/config/missing.sh"]),
        ("probe script runs curl", "'curl'"): set_in(objects, ("ConfigMap", "radiusward-member"), ["data", "ready.sh"],
                                         lambda t: t + "curl --unix-socket x http://x/status\n"),
        ("mount without volume", "names no volume"): set_in(objects, gw, container + ["volumeMounts", 0, "name"], "nothing"),
        ("no memory limit", "memory requests and limits"): set_in(objects, gw, container + ["resources"], {"requests": {"cpu": "1"}}),
        ("unknown member key", "unknown key 'colour'"): set_in(objects, ("ConfigMap", "radiusward-member"), ["data", "member-2.yaml"],
                                     lambda t: t + "colour: blue\n"),
        ("config path off the mounts", "/srv/users is on no mounted volume"): set_in(objects, ("ConfigMap", "radiusward-gateway"), ["data", "gateway.yaml"],
                                             lambda t: t.replace("/etc/radiusward/users/users", "/srv/users")),
    }
    failed = []
    for (name, needle), broken in breaks.items():
        found = [p for p in problems_of(broken, binary, with_binary=name == "unknown member key") if needle in p]
        print(f"{'caught' if found else 'MISSED'}: {name}" + (f": {found[0]}" if found else f" (no '{needle}')"))
        if not found:
            failed.append(name)
    return not failed


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    objects = load(MANIFESTS)
    if sys.argv[2:] == ["--self-test"]:
        if problems_of(objects, binary, with_binary=False):
            print("the manifests themselves have problems: run without --self-test", file=sys.stderr)
            return 1
        return 0 if self_test(objects, binary) else 1
    problems = problems_of(objects, binary)
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"ok: {len(objects)} objects in {MANIFESTS}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
