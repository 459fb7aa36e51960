#!/usr/bin/env python3
"""A hostile "controller" on an H4/TCP port, for bluesift's transport robustness tests.

    hostile_transport.py PORT MODE [--seconds S]

MODE: garbage  random bytes, forever
      endless  a well-formed stream that never ends: LE Meta events of 255 bytes, back to back
      hugeacl  ACL headers claiming 65,535 bytes, whose bodies never complete
      silent   accepts and never sends a byte
Prints `READY` once listening; serves one connection; exits after --seconds.
"""
import argparse
import os
import signal
import socket
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument('port', type=int)
    ap.add_argument('mode', choices=['garbage', 'endless', 'hugeacl', 'silent'])
    ap.add_argument('--seconds', type=float, default=30)
    ap.add_argument('--timeout', type=float, default=60, help='(rig convention) exit after this many seconds')
    ap.add_argument('--watch-pid', type=int, default=0, help='(rig convention) accepted, unused: --seconds bounds the run')
    a = ap.parse_args()
    a.seconds = min(a.seconds, a.timeout)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('127.0.0.1', a.port))
    s.listen(1)
    s.settimeout(a.seconds)
    print('READY', flush=True)
    end = time.monotonic() + a.seconds
    try:
        c, _ = s.accept()
    except OSError:
        return 0
    chunk = {
        'garbage': lambda: os.urandom(4096),
        'endless': lambda: (bytes([0x04, 0x3E, 0xFF, 0x02]) + bytes(254)) * 16,
        'hugeacl': lambda: bytes([0x02, 0x40, 0x20, 0xFF, 0xFF]) + bytes(4096),
        'silent': lambda: b'',
    }[a.mode]
    try:
        while time.monotonic() < end:
            data = chunk()
            if data:
                c.sendall(data)
            time.sleep(0.001 if data else 0.1)
    except OSError:
        pass
    return 0


if __name__ == '__main__':
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    sys.exit(main())
