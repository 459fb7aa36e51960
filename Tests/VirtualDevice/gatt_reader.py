#!/usr/bin/env python3
"""A Bumble GATT client that connects to a peripheral, discovers everything and reads every
readable characteristic, then prints what it found as one JSON object.

    gatt_reader.py tcp-client:127.0.0.1:9001 --address C0:BA:0D:00:00:01 [--mtu 128]

Output: {"mtu": N, "services": [{"uuid", "start", "end", "characteristics": [{"uuid",
"handle" (value), "declaration", "properties", "descriptors": [{"uuid", "handle"}],
"value" (hex) | "error" (ATT error code)}]}]}. Written for `bluesift emulate` tests: an app
that reads the whole database of an emulated device. Exit 0 when the session completed.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys

from bumble import hci
from bumble.att import ATT_Error
from bumble.device import Device, DeviceConfiguration, Peer

log = logging.getLogger('rig.gatt_reader')

CENTRAL_ADDRESS = 'D0:5E:55:10:00:21'  # random static
READ = 0x02


def uuid_text(u) -> str:
    """'1800', or the 128-bit form in lowercase hex without dashes."""
    return u.to_hex_str().lower()


async def session(args, device: Device) -> dict:
    kind = hci.Address.RANDOM_DEVICE_ADDRESS if args.random else hci.Address.PUBLIC_DEVICE_ADDRESS
    connection = await device.connect(hci.Address(args.address, kind), own_address_type=hci.OwnAddressType.RANDOM, timeout=5)
    peer = Peer(connection)
    mtu = await peer.request_mtu(args.mtu)
    await peer.discover_all()
    out = {'mtu': mtu, 'services': []}
    for service in peer.services:
        entry = {'uuid': uuid_text(service.uuid), 'start': service.handle, 'end': service.end_group_handle, 'characteristics': []}
        for c in service.characteristics:
            item = {'uuid': uuid_text(c.uuid), 'handle': c.handle, 'declaration': c.handle - 1, 'properties': int(c.properties),
                    'descriptors': [{'uuid': uuid_text(d.type), 'handle': d.handle} for d in c.descriptors]}
            if int(c.properties) & READ:
                try:
                    item['value'] = bytes(await peer.read_value(c)).hex()
                except ATT_Error as error:
                    item['error'] = int(error.error_code)
            entry['characteristics'].append(item)
        out['services'].append(entry)
    await connection.disconnect()
    return out


async def amain(args) -> int:
    from bumble.transport import open_transport
    transport = await asyncio.wait_for(open_transport(args.transport), 5)
    config = DeviceConfiguration()
    config.name = 'bluesift-gatt-reader'
    config.address = hci.Address(CENTRAL_ADDRESS, hci.Address.RANDOM_DEVICE_ADDRESS)
    device = Device.from_config_with_hci(config, transport.source, transport.sink)
    try:
        await asyncio.wait_for(device.power_on(), 5)
        found = await asyncio.wait_for(session(args, device), args.timeout)
        print(json.dumps(found), flush=True)
        return 0
    except (Exception, asyncio.CancelledError) as error:  # noqa: BLE001 - report and fail, never hang
        log.error('session failed: %r', error)
        return 1
    finally:
        await transport.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('transport', help='Bumble transport, e.g. tcp-client:127.0.0.1:9001')
    parser.add_argument('--address', required=True, help="the peripheral's address")
    parser.add_argument('--public', dest='random', action='store_false', help='the address is public (default: random)')
    parser.add_argument('--mtu', type=int, default=23)
    parser.add_argument('--timeout', type=float, default=20)
    parser.add_argument('--log-level', default='WARNING')
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level.upper(), format='%(asctime)s %(name)s %(levelname)s %(message)s')
    sys.exit(asyncio.run(amain(args)))


if __name__ == '__main__':
    main()
