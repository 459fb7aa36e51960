#!/usr/bin/env python3
"""The band with faults planted in its firmware, for `bluesift fuzz` tests.

    fault_band.py tcp-client:127.0.0.1:9002 [band options]
        [--bound MESSAGE.FIELD=N]   a valid frame (right length, right checksum) whose field is
                                    above N: the band drops the link (Remote User Terminated, 0x13)
        [--long-over N]             a write of more than N bytes to the vendor characteristic: the
                                    band's ATT server stops answering on that link (a hang)
        [--order A,B]               command B (hex) after command A on one link: the band resets
                                    (drops the link, Power Off 0x15; its boot counter goes up)

A readable boot counter (service 8e7f1000-…, characteristic 8e7f1001-…, u32 LE) tells a reset
from a disconnection. Prints FAULT lines to stdout as faults fire (tests read them, never sleep).
"""
from __future__ import annotations

import argparse
import asyncio
import logging
import struct
import sys

from bumble import gatt

import band_peripheral as bpe
import band_protocol as bp

FAULT_SERVICE = '8e7f1000-4b1d-4e5f-9a3c-c0ba0d000001'
BOOT_UUID = '8e7f1001-4b1d-4e5f-9a3c-c0ba0d000001'
# Where each boundable field sits in its payload: (command, offset, size).
FIELDS = {
    'sport_count.month': (bp.CMD_SPORT_COUNT, 0, 1),
    'sport_count.day': (bp.CMD_SPORT_COUNT, 1, 1),
    'sport_data.month': (bp.CMD_SPORT_DATA, 0, 1),
    'sport_data.day': (bp.CMD_SPORT_DATA, 1, 1),
    'sport_data.index': (bp.CMD_SPORT_DATA, 2, 2),
}

log = logging.getLogger('rig.fault-band')


class FaultBand(bpe.Band):
    def __init__(self, args):
        super().__init__(args)
        self.boots = 1
        self.boot_counter = gatt.Characteristic(
            BOOT_UUID, gatt.Characteristic.Properties.READ, gatt.Characteristic.READABLE,
            gatt.CharacteristicValue(read=lambda _connection: struct.pack('<I', self.boots)))
        self.seen: dict[int, list[int]] = {}
        self.muted: set[int] = set()
        self.bound = None
        if args.bound:
            name, n = args.bound.split('=')
            self.bound = (*FIELDS[name], int(n), name)
        self.order = tuple(int(c, 16) for c in args.order.split(',')) if args.order else None

    def services(self) -> list[gatt.Service]:
        return super().services() + [gatt.Service(FAULT_SERVICE, [self.boot_counter])]

    def attach(self, device) -> None:
        """Per-link hang: what the server sends on a muted link is dropped."""
        server = device.gatt_server
        send = server.send_gatt_pdu

        def filtered(bearer, pdu):
            if getattr(bearer, 'handle', None) in self.muted:
                return
            send(bearer, pdu)
        server.send_gatt_pdu = filtered

    def fire(self, what: str) -> None:
        print(f'FAULT {what}', flush=True)

    def drop(self, connection, reason: int) -> None:
        asyncio.get_running_loop().create_task(connection.disconnect(reason))

    def on_write(self, connection, value: bytes) -> None:
        if connection.handle in self.muted:
            return
        if self.args.long_over and len(value) > self.args.long_over:
            self.fire(f'long write of {len(value)} bytes: hung')
            self.muted.add(connection.handle)
            return
        reassembler, _ = self.session(connection)
        # Look at whole frames as the band's parser would, before it answers them.
        pending = bytes(reassembler.buffer) + bytes(value)
        probe = bp.Reassembler()
        for data in probe.feed(pending):
            if len(data) < 4 or data[1] != len(data) or bp.xor(data[:-1]) != data[-1]:
                continue
            cmd, payload = data[2], data[3:-1]
            if self.bound:
                c, offset, size, limit, name = self.bound
                if cmd == c and len(payload) >= offset + size:
                    v = int.from_bytes(payload[offset:offset + size], 'little')
                    if v > limit:
                        self.fire(f'{name}={v} above {limit}: disconnect')
                        self.drop(connection, 0x13)
                        return
            seen = self.seen.setdefault(connection.handle, [])
            if self.order and cmd == self.order[1] and self.order[0] in seen:
                self.boots += 1
                self.fire(f'command {cmd:02x} after {self.order[0]:02x}: reset, boot {self.boots}')
                self.sessions.clear()
                self.drop(connection, 0x15)
                return
            seen.append(cmd)
        super().on_write(connection, value)

    def on_disconnection(self, connection_handle: int) -> None:
        self.muted.discard(connection_handle)
        self.seen.pop(connection_handle, None)
        super().on_disconnection(connection_handle)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--bound', help='MESSAGE.FIELD=N: ' + ', '.join(FIELDS))
    parser.add_argument('--long-over', type=int, default=0)
    parser.add_argument('--order', default='')
    own, rest = parser.parse_known_args()
    # The band's own options parse the rest; its Band class is swapped for this one.
    sys.argv = [sys.argv[0]] + rest

    class Configured(FaultBand):
        def __init__(self, args):
            args.bound, args.long_over, args.order = own.bound, own.long_over, own.order
            super().__init__(args)
    original = bpe.make_device

    def make_device(band, args, hci_source=None, hci_sink=None):
        device = original(band, args, hci_source, hci_sink)
        if isinstance(band, FaultBand):
            band.attach(device)
        return device
    bpe.Band = Configured
    bpe.make_device = make_device
    print(f'faults: bound={own.bound} long_over={own.long_over} order={own.order}', flush=True)
    bpe.main()


if __name__ == '__main__':
    import signal as _signal
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGTERM, _signal.SIGINT})
    logging.getLogger('rig.fault-band')
    main()
