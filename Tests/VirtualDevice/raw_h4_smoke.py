#!/usr/bin/env python3
"""Minimal H4 host using only sockets, to debug the rig without Bumble on the host side.

    raw_h4_smoke.py 127.0.0.1:9001            HCI_Reset + Read BD_ADDR
    raw_h4_smoke.py 127.0.0.1:9001 --scan     + legacy active scan: expects LE Advertising Reports
    raw_h4_smoke.py 127.0.0.1:9001 --cancel   + Create Connection to nobody, cancel (expects LE
                                               Connection Complete 0x02); Disconnect and Read RSSI
                                               on an unknown handle; an unknown vendor command

Exit 0 when every check passed.
"""
import argparse
import socket
import struct
import sys
import time


class H4:
    def __init__(self, host: str, port: int):
        self.sock = socket.create_connection((host, port), timeout=3)
        self.pending_events: list[bytes] = []

    def read_exact(self, n: int) -> bytes:
        buf = b''
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise ConnectionError('controller closed the connection (port busy?)')
            buf += chunk
        return buf

    def read_event(self, timeout: float = 3) -> bytes:
        """Next H4 event (code, length, parameters); ACL data is skipped."""
        if self.pending_events:
            return self.pending_events.pop(0)
        self.sock.settimeout(timeout)
        while True:
            kind = self.read_exact(1)[0]
            if kind == 0x04:
                header = self.read_exact(2)
                return header + self.read_exact(header[1])
            if kind == 0x02:
                header = self.read_exact(4)
                self.read_exact(int.from_bytes(header[2:4], 'little'))
            else:
                raise ValueError(f'unexpected H4 packet type {kind:#04x}')

    def command(self, opcode: int, params: bytes = b'') -> bytes:
        """Sends a command; returns Command Complete return parameters or the Command Status byte."""
        self.sock.sendall(struct.pack('<BHB', 0x01, opcode, len(params)) + params)
        while True:
            event = self.read_event()
            if event[0] == 0x0E and struct.unpack_from('<H', event, 3)[0] == opcode:
                return event[5:]
            if event[0] == 0x0F and struct.unpack_from('<H', event, 4)[0] == opcode:
                return event[2:3]
            self.pending_events.append(event)

    def wait_le_meta(self, subevent: int, seconds: float) -> bytes | None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                event = self.read_event(max(0.01, deadline - time.monotonic()))
            except socket.timeout:
                return None
            if event[0] == 0x3E and event[2] == subevent:
                return event[2:]
        return None


def check(ok: bool, what: str) -> bool:
    print(f'{"ok  " if ok else "FAIL"} {what}')
    return ok


def run(args) -> bool:
    host, _, port = args.endpoint.rpartition(':')
    h4 = H4(host or '127.0.0.1', int(port))
    good = check(h4.command(0x0C03)[0] == 0, 'HCI_Reset status 0x00')
    params = h4.command(0x1009)
    print('     BD_ADDR', ':'.join(f'{b:02X}' for b in reversed(params[1:7])))
    h4.command(0x0C01, bytes.fromhex('ffffffffffffff3f'))   # Set Event Mask: all
    h4.command(0x2001, bytes.fromhex('ff0f000000000000'))   # LE Set Event Mask
    h4.command(0x2005, bytes.fromhex('c10000000002'))       # LE Set Random Address C2:00:00:00:00:C1
    if args.scan:
        h4.command(0x200B, bytes([1]) + struct.pack('<HH', 0x10, 0x10) + bytes([1, 0]))  # active
        good &= check(h4.command(0x200C, b'\x01\x00')[0] == 0, 'LE Set Scan Enable')
        seen = set()
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and len(seen) < 2:
            report = h4.wait_le_meta(0x02, deadline - time.monotonic())
            if report:
                addr = ':'.join(f'{b:02X}' for b in reversed(report[4:10]))
                seen.add(report[2])
                print(f'     report type {report[2]} from {addr}: {report[11:11 + report[10]].hex()}')
        good &= check(0 in seen, 'legacy LE Advertising Report (subevent 0x02) ADV_IND')
        h4.command(0x200C, b'\x00\x00')
    if args.cancel:
        create = struct.pack('<HHBB6sBHHHHHH', 0x10, 0x10, 0, 1, bytes.fromhex('0100000000cc'), 1,
                             24, 40, 0, 400, 0, 0)
        good &= check(h4.command(0x200D, create)[0] == 0, 'LE Create Connection pending')
        good &= check(h4.command(0x200E)[0] == 0, 'LE Create Connection Cancel')
        complete = h4.wait_le_meta(0x01, 2)
        good &= check(complete is not None and complete[1] == 0x02, 'LE Connection Complete status 0x02')
        good &= check(h4.command(0x0406, b'\x77\x00\x13')[0] == 0x02, 'Disconnect unknown handle: 0x02')
        good &= check(h4.command(0x1405, b'\x77\x00')[0] == 0x02, 'Read RSSI unknown handle: 0x02')
        good &= check(h4.command(0xFC01, b'\x00')[0] == 0x01, 'vendor command 0xFC01: Unknown HCI Command')
    return good


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('endpoint', nargs='?', default='127.0.0.1:9001')
    parser.add_argument('--scan', action='store_true')
    parser.add_argument('--cancel', action='store_true')
    args = parser.parse_args()
    try:
        return 0 if run(args) else 1
    except (OSError, ValueError) as error:
        print(f'FAIL {error}')
        return 1


if __name__ == '__main__':
    sys.exit(main())
