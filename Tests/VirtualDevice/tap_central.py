#!/usr/bin/env python3
"""A Bumble central that runs one short GATT session with the band and logs every ATT PDU.

    tap_central.py tcp-client:127.0.0.1:9482 --log att.jsonl [--snoop host.btsnoop]

Connects to the band (no scan), exchanges MTU, discovers everything, reads the firmware
string and the battery level, subscribes to the vendor notifications (the band answers with
live steps), sends device_info as a Write Request and ping as a Write Command, waits for
both replies, disconnects. Written for `bluesift tap` tests: the host side of the tap.

--log writes one JSON object per ATT PDU as this host sent or received it, in order, from
the L2CAP layer of Bumble's host (not from HCI): {"dir": "sent"|"received", "opcode": N,
"pdu": hex} plus "handle" and "value" for the PDUs that carry them (Core 5.4 Vol 3 Part F
§3.4: reads, writes, notifications, indications). --snoop makes Bumble write this host's
HCI traffic as btsnoop (BUMBLE_SNOOPER). Exit 0 only when every expected answer arrived.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys

from bumble import hci
from bumble.att import ATT_CID
from bumble.core import UUID
from bumble.device import Device, DeviceConfiguration, Peer

import band_protocol as bp

log = logging.getLogger('rig.tap_central')

CENTRAL_ADDRESS = 'D0:5E:55:10:00:17'  # random static

# Opcodes whose PDU starts with a handle, and where their value starts.
HANDLE_OPCODES = {0x0A, 0x0C, 0x12, 0x52, 0x1B, 0x1D}
VALUE_AFTER = {0x0B: 1, 0x0D: 1, 0x12: 3, 0x52: 3, 0x1B: 3, 0x1D: 3}


def att_entry(direction: str, pdu: bytes) -> dict:
    op = pdu[0]
    entry = {'dir': direction, 'opcode': op, 'pdu': pdu.hex()}
    if op in HANDLE_OPCODES and len(pdu) >= 3:
        entry['handle'] = int.from_bytes(pdu[1:3], 'little')
    if op in VALUE_AFTER:
        entry['value'] = pdu[VALUE_AFTER[op]:].hex()
    return entry


def log_att(device: Device, sink) -> None:
    """Wraps the host's ATT ins and outs: every PDU, in the order it passed."""
    host = device.host
    send = host.send_l2cap_pdu

    def sending(handle: int, cid: int, pdu: bytes) -> None:
        if cid == ATT_CID:
            sink(att_entry('sent', bytes(pdu)))
        send(handle, cid, pdu)
    host.send_l2cap_pdu = sending

    manager = device.l2cap_channel_manager
    receive = manager.fixed_channels[ATT_CID]

    def receiving(handle: int, pdu: bytes) -> None:
        sink(att_entry('received', bytes(pdu)))
        receive(handle, pdu)
    manager.fixed_channels[ATT_CID] = receiving


async def session(args, device: Device) -> None:
    band = hci.Address(args.band, hci.Address.RANDOM_DEVICE_ADDRESS)
    connection = await device.connect(band, own_address_type=hci.OwnAddressType.RANDOM, timeout=5)
    peer = Peer(connection)
    mtu = await peer.request_mtu(args.mtu)
    log.info('mtu %d', mtu)
    await peer.discover_all()

    def char(uuid: str):
        found = peer.get_characteristics_by_uuid(UUID(uuid))
        if not found:
            raise RuntimeError(f'characteristic {uuid} not found')
        return found[0]

    firmware = bytes(await peer.read_value(char('2A26')))
    if firmware != b'1.4.2':
        raise RuntimeError(f'firmware {firmware!r}')
    battery = bytes(await peer.read_value(char('2A19')))
    if battery != bytes([87]):
        raise RuntimeError(f'battery {battery.hex()}')

    frames: asyncio.Queue[bytes] = asyncio.Queue()
    reassembler = bp.Reassembler()

    def on_notification(value: bytes) -> None:
        for f in reassembler.feed(bytes(value)):
            frames.put_nowait(f)
    await peer.subscribe(char(bp.NOTIFY_UUID), on_notification)

    async def expect(cmd: int) -> None:
        f = await asyncio.wait_for(frames.get(), 3)
        if f[2] != cmd:
            raise RuntimeError(f'expected reply {cmd:#04x}, got {f.hex()}')
        log.info('reply %s', f.hex())

    await expect(bp.EVT_LIVE_STEPS)
    write = char(bp.WRITE_UUID)
    await peer.write_value(write, bp.frame(bp.CMD_DEVICE_INFO), with_response=True)
    await expect(0x81)
    await peer.write_value(write, bp.frame(bp.CMD_PING), with_response=False)
    await expect(0x86)
    await connection.disconnect()


async def amain(args) -> int:
    if args.snoop:
        os.environ['BUMBLE_SNOOPER'] = f'btsnoop:file:{args.snoop}'
    from bumble.transport import open_transport  # after BUMBLE_SNOOPER is set

    out = open(args.log, 'w') if args.log else None

    def sink(entry: dict) -> None:
        if out:
            out.write(json.dumps(entry) + '\n')
            out.flush()

    transport = await asyncio.wait_for(open_transport(args.transport), 5)
    config = DeviceConfiguration()
    config.name = 'bluesift-tap-central'
    config.address = hci.Address(CENTRAL_ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)
    device = Device.from_config_with_hci(config, transport.source, transport.sink)
    log_att(device, sink)
    try:
        await asyncio.wait_for(device.power_on(), 5)
        await asyncio.wait_for(session(args, device), args.timeout)
        print('SESSION OK', flush=True)
        return 0
    except (Exception, asyncio.CancelledError) as error:  # noqa: BLE001 - report and fail, never hang
        log.error('session failed: %r', error)
        return 1
    finally:
        await transport.close()
        if out:
            out.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('transport', help='Bumble transport, e.g. tcp-client:127.0.0.1:9482')
    parser.add_argument('--band', default='C0:BA:0D:00:00:01', help="band's random static address")
    parser.add_argument('--mtu', type=int, default=23)
    parser.add_argument('--log', metavar='FILE', help='ATT PDUs as JSON Lines')
    parser.add_argument('--snoop', metavar='FILE', help="this host's HCI traffic as btsnoop")
    parser.add_argument('--timeout', type=float, default=15)
    parser.add_argument('--log-level', default='INFO')
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(), format='%(asctime)s %(name)s %(levelname)s %(message)s')
    sys.exit(asyncio.run(amain(args)))


if __name__ == '__main__':
    main()
