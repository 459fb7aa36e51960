#!/usr/bin/env python3
"""Round-trip time of an HCI command straight to a virtual controller and through `bluesift tap`.

    tap_latency.py --direct 127.0.0.1:9497 --tapped 127.0.0.1:9499 [-n 2000]

Sends HCI Read Local Version Information (01 01 10 00) and waits for its Command Complete,
N times on each socket (raw H4 over TCP, no Bumble host in the way), and prints the median
and 99th percentile of each and what the tap adds. The two ports should be two identical
controllers of one controllers.py, the tapped one behind `bluesift tap`.
"""
import argparse
import socket
import statistics
import time

COMMAND = bytes([0x01, 0x01, 0x10, 0x00])


def measure(address: str, n: int) -> list[float]:
    host, port = address.rsplit(':', 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    times = []
    for i in range(n + 50):
        t0 = time.perf_counter()
        s.sendall(COMMAND)
        got = b''
        while len(got) < 3 or len(got) < 3 + got[2]:  # 04 0e LEN ...
            chunk = s.recv(256)
            if not chunk:
                raise SystemExit(f'{address}: closed')
            got += chunk
        if i >= 50:  # warm-up skipped
            times.append((time.perf_counter() - t0) * 1e6)
    s.close()
    return times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('--direct', required=True)
    p.add_argument('--tapped', required=True)
    p.add_argument('-n', type=int, default=2000)
    a = p.parse_args()
    d, t = measure(a.direct, a.n), measure(a.tapped, a.n)

    def q(v, f):
        return sorted(v)[int(f * (len(v) - 1))]
    print(f'tap latency: {a.n} commands; direct median {statistics.median(d):.0f} us, p99 {q(d, .99):.0f} us; '
          f'through the tap median {statistics.median(t):.0f} us, p99 {q(t, .99):.0f} us; '
          f'added median {statistics.median(t) - statistics.median(d):.0f} us')


if __name__ == '__main__':
    main()
