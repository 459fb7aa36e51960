#!/usr/bin/env python3
"""Minimal H4 host using only sockets: resets a controller and reads its BD_ADDR.

    raw_h4_smoke.py 127.0.0.1:9001

Exit 0 when HCI_Reset answers Command Complete with status 0. No Bumble needed, so it
tells whether a problem lies in the rig or in a host.
"""
import socket
import sys

RESET = bytes.fromhex('01030c00')          # H4 command, opcode 0x0C03, no parameters
READ_BD_ADDR = bytes.fromhex('01091000')   # opcode 0x1009


def read_event(sock: socket.socket) -> bytes:
    """Reads one H4 event packet (type 04, code, length, parameters)."""
    def read_exact(n: int) -> bytes:
        buf = b''
        while len(buf) < n:
            chunk = sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError('controller closed the connection')
            buf += chunk
        return buf

    while True:
        kind = read_exact(1)[0]
        if kind == 0x04:
            header = read_exact(2)
            return header + read_exact(header[1])
        if kind == 0x02:  # skip stray ACL data
            header = read_exact(4)
            read_exact(int.from_bytes(header[2:4], 'little'))
        else:
            raise ValueError(f'unexpected H4 packet type {kind:#04x}')


def command(sock: socket.socket, packet: bytes) -> bytes:
    sock.sendall(packet)
    opcode = packet[1:3]
    while True:
        event = read_event(sock)
        if event[0] == 0x0E and event[3:5] == opcode:  # Command Complete for our opcode
            return event[5:]
        if event[0] == 0x0F and event[4:6] == opcode:  # Command Status
            return event[2:3]


def main() -> int:
    host, _, port = (sys.argv[1] if len(sys.argv) > 1 else '127.0.0.1:9001').rpartition(':')
    with socket.create_connection((host or '127.0.0.1', int(port)), timeout=3) as sock:
        sock.settimeout(3)
        status = command(sock, RESET)
        print(f'HCI_Reset status: {status[0]:#04x}')
        params = command(sock, READ_BD_ADDR)
        addr = ':'.join(f'{b:02X}' for b in reversed(params[1:7]))
        print(f'BD_ADDR: {addr}')
        return 0 if status[0] == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
