#!/usr/bin/env python3
"""A phone-app-like Bumble central that runs one scripted session with the band.

    record_session.py tcp-client:127.0.0.1:9001 --snoop out.btsnoop [--mtu 23]

    record_session.py tcp-client:127.0.0.1:9001 --log att.jsonl [--year 2027] [--pair sc --io keyboard --passkey N]

Scans briefly, connects to the band by address, exchanges MTU, discovers all services,
characteristics and descriptors, reads DIS strings and battery, subscribes, then sends
the vendor commands (both Write Request and Write Command) and disconnects.
--snoop sets BUMBLE_SNOOPER for this (host) process, so directions come out right.
Exit status 0 only when every expected reply arrived.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import struct
import sys

from bumble import hci, pairing
from bumble.core import UUID
from bumble.device import Device, DeviceConfiguration, Peer

import band_protocol as bp
from tap_central import log_att

log = logging.getLogger('rig.record')

CENTRAL_ADDRESS = 'D0:5E:55:10:00:02'  # random static (two top bits set)
USER_NAME = b'Augusta Ada King-Noel Lovelace'  # 30 characters: a frame over several writes
assert len(USER_NAME) == 30


IO_CAPABILITIES = {
    'noio': pairing.PairingDelegate.NO_OUTPUT_NO_INPUT,
    'display': pairing.PairingDelegate.DISPLAY_OUTPUT_ONLY,
    'keyboard': pairing.PairingDelegate.KEYBOARD_INPUT_ONLY,
    'yesno': pairing.PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
}


class CentralPairingDelegate(pairing.PairingDelegate):
    """The phone's side of --pair: types (or shows) --passkey, accepts compared digits."""

    def __init__(self, args):
        super().__init__(io_capability=IO_CAPABILITIES[args.io])
        self.passkey = args.passkey

    async def get_number(self) -> int | None:
        return self.passkey

    async def generate_passkey(self) -> int:
        return self.passkey

    async def compare_numbers(self, number: int, digits: int) -> bool:
        return True


class Replies:
    """Reassembles notification chunks of 0x36F6 into frames by the LEN byte."""

    def __init__(self):
        self.reassembler = bp.Reassembler()
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()

    def on_notification(self, value: bytes) -> None:
        for frame in self.reassembler.feed(bytes(value)):
            self.queue.put_nowait(frame)

    async def expect(self, cmd: int, timeout: float = 1.0) -> bytes:
        frame = await asyncio.wait_for(self.queue.get(), timeout)
        if frame[2] != cmd:
            raise RuntimeError(f'expected reply {cmd:#04x}, got {frame.hex()}')
        log.info('reply %s', frame.hex())
        return frame


async def write_frame(peer: Peer, characteristic, frame: bytes, with_response: bool, mtu: int) -> None:
    # A frame longer than one write (ATT_MTU - 3) goes out in several writes.
    size = mtu - 3
    for offset in range(0, len(frame), size):
        await peer.write_value(characteristic, frame[offset:offset + size], with_response=with_response)


async def session(args, device: Device) -> None:
    if args.scan:
        await device.start_scanning(active=True, filter_duplicates=False)
        await asyncio.sleep(args.scan)
        await device.stop_scanning()

    band = hci.Address(args.band, hci.Address.RANDOM_DEVICE_ADDRESS)
    own = hci.OwnAddressType.PUBLIC if args.public else hci.OwnAddressType.RANDOM
    connection = await device.connect(band, own_address_type=own, timeout=3)
    if args.pair:
        await connection.pair()
        log.warning('PAIRED encrypted=%s authenticated=%s', connection.is_encrypted, connection.authenticated)
    peer = Peer(connection)
    # Fail at once, not at the overall timeout, when the band goes away mid-session.
    session_task = asyncio.current_task()
    closing = False

    def on_disconnection(reason: int) -> None:
        if not closing:
            log.error('band disconnected, reason %#04x', reason)
            session_task.cancel()
    connection.on('disconnection', on_disconnection)
    mtu = await peer.request_mtu(args.mtu)
    log.info('mtu %d', mtu)
    await peer.discover_all()

    def char(uuid: str):
        found = peer.get_characteristics_by_uuid(UUID(uuid))
        if not found:
            raise RuntimeError(f'characteristic {uuid} not found')
        return found[0]

    for uuid in ('2A29', '2A24', '2A26', '2A50'):
        log.info('%s = %r', uuid, await peer.read_value(char(uuid)))
    battery = char('2A19')
    log.info('battery %d', (await peer.read_value(battery))[0])

    replies = Replies()
    await peer.subscribe(battery, lambda v: log.info('battery notification %s', v.hex()))
    await peer.subscribe(char(bp.NOTIFY_UUID), replies.on_notification)
    await replies.expect(bp.EVT_LIVE_STEPS)

    write = char(bp.WRITE_UUID)
    steps = [
        (bp.frame(bp.CMD_DEVICE_INFO), True, 0x81),
        (bp.frame(bp.CMD_SET_TIME, struct.pack('<H5B', args.year, 6, 20, 9, 30, 0)), False, 0x82),
        (bp.frame(bp.CMD_SPORT_COUNT, bytes([6, args.sport_day])), True, 0x83),
        (bp.frame(bp.CMD_SPORT_DATA, bytes([6, 20]) + struct.pack('<H', 0)), False, 0x84),
        (bp.frame(bp.CMD_SET_USER_NAME, USER_NAME), False, 0x85),
        (bp.frame(bp.CMD_PING), True, 0x86),
    ]
    bad = bytearray(bp.frame(bp.CMD_PING))
    bad[-1] ^= 0xFF  # deliberately wrong checksum
    steps.append((bytes(bad), False, bp.NACK))
    for frame, with_response, reply in steps:
        await write_frame(peer, write, frame, with_response, mtu)
        await replies.expect(reply)
        await asyncio.sleep(args.delay)

    closing = True
    await connection.disconnect()


async def amain(args) -> int:
    if args.snoop:
        os.environ['BUMBLE_SNOOPER'] = f'btsnoop:file:{args.snoop}'
    from bumble.transport import open_transport  # after BUMBLE_SNOOPER is set

    transport = await asyncio.wait_for(open_transport(args.transport), 5)
    config = DeviceConfiguration()
    config.name = 'bluesift-central'
    config.address = hci.Address(CENTRAL_ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)
    device = Device.from_config_with_hci(config, transport.source, transport.sink)
    if args.pair:
        device.pairing_config_factory = lambda connection: pairing.PairingConfig(
            sc=args.pair == 'sc', mitm=args.io != 'noio', bonding=False, delegate=CentralPairingDelegate(args))
    out = open(args.log, 'w') if args.log else None
    if out:
        log_att(device, lambda entry: (out.write(json.dumps(entry) + '\n'), out.flush()))
    try:
        await asyncio.wait_for(device.power_on(), 5)
        await asyncio.wait_for(session(args, device), args.timeout)
        return 0
    except (Exception, asyncio.CancelledError) as error:  # noqa: BLE001 - report and fail, never hang
        log.error('session failed: %r', error)
        return 1
    finally:
        await transport.close()
        await asyncio.sleep(0)
        if out:
            out.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('transport', help='Bumble transport, e.g. tcp-client:127.0.0.1:9001')
    parser.add_argument('--band', default='C0:BA:0D:00:00:01', help="band's random static address")
    parser.add_argument('--mtu', type=int, default=23)
    parser.add_argument('--snoop', metavar='FILE', help='write this host\'s HCI traffic as btsnoop')
    parser.add_argument('--scan', type=float, default=0.3, help='seconds of active scanning first (0: none)')
    parser.add_argument('--delay', type=float, default=0.05, help='pause between commands (s)')
    parser.add_argument('--public', action='store_true', help='connect with the public address (routing check)')
    parser.add_argument('--timeout', type=float, default=8)
    parser.add_argument('--log', metavar='FILE', help='every ATT PDU sent and received, as JSON Lines (tap_central.py --log)')
    parser.add_argument('--pair', choices=['sc', 'legacy'], help='pair first (LE Secure Connections, or legacy only)')
    parser.add_argument('--io', choices=sorted(IO_CAPABILITIES), default='noio', help='IO capability when pairing')
    parser.add_argument('--passkey', type=int, default=123456, help='passkey typed (or shown) when pairing')
    parser.add_argument('--sport-day', type=int, default=20, help="sport_count's day (a write no recording has)")
    parser.add_argument('--year', type=int, default=2026, help="set_time's year (an app's clock: emulate's field match)")
    parser.add_argument('--log-level', default='INFO')
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(), format='%(asctime)s %(name)s %(levelname)s %(message)s')
    sys.exit(asyncio.run(amain(args)))


if __name__ == '__main__':
    main()
