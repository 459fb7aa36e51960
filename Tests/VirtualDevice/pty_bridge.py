#!/usr/bin/env python3
"""A virtual controller reached over TCP, offered as a serial line (a pty) instead.

    pty_bridge.py 127.0.0.1:9492 [--timeout S] [--watch-pid PID]

Opens a pseudo-terminal, puts it in raw mode, connects to the controller's H4 port and relays
bytes both ways between the pty and the socket. Prints `READY /dev/pts/N` once connected: open
that path as `serial:/dev/pts/N`. Ends when the controller closes, after --timeout seconds,
or when the process --watch-pid names is gone. For tests of `bluesift tap --controller serial:`.
"""
import argparse
import os
import pty
import select
import socket
import sys
import time
import tty


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument('controller', help='HOST:PORT of the controller')
    p.add_argument('--timeout', type=float, default=60)
    p.add_argument('--watch-pid', type=int)
    a = p.parse_args()
    master, slave = pty.openpty()
    # Raw from the start: no echo or line editing of H4 bytes before the tap configures it.
    tty.setraw(master)
    tty.setraw(slave)
    host, port = a.controller.rsplit(':', 1)
    s = socket.create_connection((host, int(port)), timeout=5)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    print(f'READY {os.ttyname(slave)}', flush=True)
    deadline = time.monotonic() + a.timeout
    while time.monotonic() < deadline:
        if a.watch_pid:
            try:
                os.kill(a.watch_pid, 0)
            except ProcessLookupError:
                break
        ready, _, _ = select.select([master, s], [], [], 0.2)
        if master in ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # EIO: nobody holds the other end (the slave fd is ours, so rare)
                data = b''
            if data:
                s.sendall(data)
        if s in ready:
            data = s.recv(4096)
            if not data:
                break
            while data:
                data = data[os.write(master, data):]
    s.close()
    os.close(master)
    os.close(slave)
    sys.exit(0)


if __name__ == '__main__':
    main()
