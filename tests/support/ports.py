"""Ports for the processes a test starts and restarts.

A port the kernel hands out for bind(port 0) comes from the ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range), the same range every outgoing
connection on the machine takes its source port from. A member killed by a
fault test and restarted a few seconds later then finds its port taken by
some connection made meanwhile (seen: "bind submission 127.0.0.1:44539:
Address already in use" in a fault campaign running scenarios side by
side). So ports are drawn at random below that range, where nothing takes a
port unless asked, and kept only when both TCP and UDP can bind them now."""

import random
import socket

_taken = set()  # handed out by this process


def _ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(kind=socket.SOCK_STREAM):
    """A port on 127.0.0.1 that TCP and UDP can bind now, below the
    ephemeral range and not handed out before by this process. `kind` is
    accepted for the callers that name the socket type they will use."""
    del kind  # both are checked
    high = min(_ephemeral_low(), 65536)
    low = max(1024, high - 12000)
    for _ in range(1000):
        port = random.randrange(low, high)
        if port in _taken:
            continue
        try:
            for sock_type in (socket.SOCK_STREAM, socket.SOCK_DGRAM):
                with socket.socket(socket.AF_INET, sock_type) as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        _taken.add(port)
        return port
    raise RuntimeError(f"no free port in [{low}, {high})")
