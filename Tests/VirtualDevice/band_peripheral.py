#!/usr/bin/env python3
"""A fitness band ("bluesift-band") as a Bumble LE peripheral with a GATT server.

    band_peripheral.py tcp-client:127.0.0.1:9002 [--mtu 185] [--layout moved]
        [--regression 03] [--vanish-after N] [--silent-after N] [--mute-after N] [--dump-gatt FILE]
        [--hostile malformed-att|wrong-opcode|flood] [--flood-seconds S] [--flood-rate N]
        [--security encryption|authentication] [--pairing sc|legacy] [--io noio|display|yesno|keyboard|kbdisplay]
        [--passkey N] [--keystore FILE]

Prints `READY <address>` on stdout once advertising. With --dump-gatt and no transport it
writes the database and exits. The vendor protocol is in band_protocol.py.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import signal
import struct
import sys
import time

from bumble import gatt, hci, pairing
from bumble.keys import JsonKeyStore
from bumble.core import AdvertisingData, UUID
from bumble.device import Device, DeviceConfiguration
from bumble.transport import open_transport

import band_protocol as bp
from controllers import FLOOD_OPCODE

log = logging.getLogger('rig.band')

NAME = 'bluesift-band'
DEFAULT_ADDRESS = 'C0:BA:0D:00:00:01'
# PnP ID: vendor ID source 2 (USB-IF), vendor 0x1234, product 0x0B1D, version 0x0142.
PNP_ID = bytes([0x02]) + struct.pack('<HHH', 0x1234, 0x0B1D, 0x0142)
MOVED_SERVICE = '8e7f0000-4b1d-4e5f-9a3c-c0ba0d000001'

Props = gatt.Characteristic.Properties


def readable(uuid: str, value: bytes) -> gatt.Characteristic:
    return gatt.Characteristic(uuid, Props.READ, gatt.Characteristic.READABLE, value)


class Band:
    def __init__(self, args):
        self.args = args
        self.regression = {int(c, 16) for c in args.regression.split(',') if c} if args.regression else set()
        self.started = time.monotonic()
        self.writes = 0
        # Notifications sent through the GATT server (the flood is counted by the controller).
        self.notified = 0
        self.sessions: dict[int, tuple[bp.Reassembler, bp.BandState]] = {}
        self.vanish = asyncio.Event()
        self.device: Device | None = None

        self.battery_level = gatt.Characteristic(
            '2A19', Props.READ | Props.NOTIFY, gatt.Characteristic.READABLE, bytes([87]))
        # --security: the vendor commands need an encrypted (or authenticated) link; a write
        # before gets Insufficient Encryption 0x0F (Insufficient Authentication 0x05).
        write_permissions = {
            'none': gatt.Characteristic.WRITEABLE,
            'encryption': gatt.Characteristic.WRITE_REQUIRES_ENCRYPTION,
            'authentication': gatt.Characteristic.WRITE_REQUIRES_ENCRYPTION | gatt.Characteristic.WRITE_REQUIRES_AUTHENTICATION,
        }[args.security]
        self.vendor_write = gatt.Characteristic(
            bp.WRITE_UUID, Props.WRITE | Props.WRITE_WITHOUT_RESPONSE, write_permissions,
            gatt.CharacteristicValue(write=self.on_write))
        self.vendor_notify = gatt.Characteristic(
            bp.NOTIFY_UUID, Props.NOTIFY, gatt.Characteristic.READABLE, b'')
        self.vendor_notify.on('subscription', self.on_subscription)

    def services(self) -> list[gatt.Service]:
        firmware = '1.4.3' if self.regression else '1.4.2'
        services = []
        if self.args.layout == 'moved':
            # A service the normal layout lacks, placed first: every later handle shifts.
            services.append(gatt.Service(MOVED_SERVICE, [
                readable('8e7f0001-4b1d-4e5f-9a3c-c0ba0d000001', b'\x00'),
                gatt.Characteristic('8e7f0002-4b1d-4e5f-9a3c-c0ba0d000001', Props.READ | Props.NOTIFY,
                                    gatt.Characteristic.READABLE, b'\x00'),
            ]))
        services += [
            gatt.Service('180F', [self.battery_level]),
            gatt.Service('180A', [
                readable('2A29', b'bluesift'),
                readable('2A24', b'BAND-1'),
                readable('2A26', firmware.encode()),
                readable('2A50', PNP_ID),
            ]),
        ]
        if self.args.layout != 'impostor':
            services.append(gatt.Service(bp.SERVICE_UUID, [self.vendor_write, self.vendor_notify]))
        return services

    def uptime(self) -> int:
        # Frozen by default so captures and replays against the rig are reproducible.
        if self.args.clock == 'real':
            return int(time.monotonic() - self.started)
        return 3600

    def session(self, connection) -> tuple[bp.Reassembler, bp.BandState]:
        key = connection.handle
        if key not in self.sessions:
            self.sessions[key] = (bp.Reassembler(), bp.BandState(regression=self.regression))
        return self.sessions[key]

    # -- vendor protocol -----------------------------------------------------------------
    def on_write(self, connection, value: bytes) -> None:
        self.writes += 1
        count = self.writes
        # Tests wait on these lines (e.g. to break the link after the Nth write), not on sleeps.
        print(f'WRITE {count}', flush=True)
        if self.args.silent_after and count > self.args.silent_after:
            log.info('silent: ignoring write %d', count)
            return
        if self.args.mute_after and count > self.args.mute_after:
            # A hung device: from here on its ATT server sends nothing, not even Write Responses.
            log.info('mute: ATT server stops answering at write %d', count)
            self.device.gatt_server.send_gatt_pdu = lambda *a, **k: None
            return
        if self.args.hostile == 'malformed-att':
            # Before the real answer: a notification cut after its opcode and half a handle, an
            # opcode no version of ATT defines, an empty PDU, and a Find Information Response
            # whose format byte is unknown (Core 5.4 Vol 3 Part F §3.4.3.2).
            for pdu in (b'\x1b\x1f', b'\xff\x01\x02', b'', b'\x05\x07\x01\x00'):
                self.device.send_l2cap_pdu(connection.handle, 0x0004, pdu)
        elif self.args.hostile == 'wrong-opcode':
            # A Read Response (0x0B) and an Exchange MTU Response where a Write Response is due.
            self.device.send_l2cap_pdu(connection.handle, 0x0004, b'\x0b\xaa\xbb')
            self.device.send_l2cap_pdu(connection.handle, 0x0004, b'\x03\xff\xff')
        reassembler, state = self.session(connection)
        for data in reassembler.feed(bytes(value)):
            reply = state.answer(data, self.uptime())
            # Reply after returning, so a Write Response precedes the notification.
            asyncio.get_running_loop().create_task(self.notify(connection, reply))
        if self.args.vanish_after and count >= self.args.vanish_after:
            asyncio.get_running_loop().call_later(0.05, self.vanish.set)

    async def notify(self, connection, frame: bytes) -> None:
        # Frames longer than one notification (ATT_MTU - 3) go out in several, in order.
        size = connection.att_mtu - 3
        for offset in range(0, len(frame), size):
            await self.device.notify_subscriber(connection, self.vendor_notify, frame[offset:offset + size])
            self.notified += 1

    async def flood(self, connection) -> None:
        """--flood-rate notifications a second for --flood-seconds: asked of the band's
        controller (vendor command, controllers.py RigController.flood), which puts them on
        the link as pre-built ACL packets; Bumble's GATT path carries ~2,300/s at most."""
        params = struct.pack('<HHII', connection.handle, self.vendor_notify.handle,
                             self.args.flood_rate, int(self.args.flood_seconds * 1000))
        await self.device.host.send_command(hci.HCI_Command(op_code=FLOOD_OPCODE, parameters=params))
        log.warning('flood: asked for %d/s for %.1f s', self.args.flood_rate, self.args.flood_seconds)

    def on_subscription(self, connection, notify_enabled: bool, _indicate: bool) -> None:
        if notify_enabled and self.args.hostile == 'flood':
            asyncio.get_running_loop().create_task(self.flood(connection))
        if notify_enabled:
            live = bp.frame(bp.EVT_LIVE_STEPS, struct.pack('<I', 4321))
            asyncio.get_running_loop().create_task(self.notify(connection, live))

    def on_disconnection(self, connection_handle: int) -> None:
        self.sessions.pop(connection_handle, None)
        log.warning('NOTIFIED %d', self.notified)


def uuid_name(uuid: UUID) -> str | None:
    """Assigned-number name as Bumble knows it (UUIDs built from strings carry none)."""
    if uuid.name:
        return uuid.name
    for value in vars(gatt).values():
        if isinstance(value, UUID) and value == uuid and value.name:
            return value.name
    return None


def uuid_text(uuid: UUID) -> str:
    b = bytes(reversed(uuid.uuid_bytes))
    if len(b) == 2:
        return b.hex()
    h = uuid.to_bytes(force_128=True)[::-1].hex()
    return f'{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}'


PROPERTY_NAMES = [(0x01, 'broadcast'), (0x02, 'read'), (0x04, 'write_without_response'), (0x08, 'write'),
                  (0x10, 'notify'), (0x20, 'indicate'), (0x40, 'authenticated_signed_writes'),
                  (0x80, 'extended_properties')]


def gatt_json(device: Device, address: str) -> dict:
    """The database in bluesift's `gatt --format json` schema (handles as integers)."""
    services = []
    for service in device.gatt_server.services:
        entry = {'uuid': uuid_text(service.uuid), 'start': service.handle,
                 'end': service.end_group_handle, 'primary': bool(service.primary), 'characteristics': []}
        if name := uuid_name(service.uuid):
            entry['name'] = name
        for c in service.characteristics:
            descriptors = [a for a in device.gatt_server.attributes
                           if c.handle < a.handle <= c.end_group_handle]
            item = {'uuid': uuid_text(c.uuid), 'handle': c.handle - 1, 'value_handle': c.handle,
                    'properties': [n for bit, n in PROPERTY_NAMES if int(c.properties) & bit],
                    'descriptors': [{'handle': d.handle, 'uuid': uuid_text(d.type),
                                     **({'name': n} if (n := uuid_name(d.type)) else {})} for d in descriptors]}
            if name := uuid_name(c.uuid):
                item['name'] = name
            entry['characteristics'].append(item)
        services.append(entry)
    return {'devices': [{'address': address.lower(), 'services': services}]}


IO_CAPABILITIES = {
    'noio': pairing.PairingDelegate.NO_OUTPUT_NO_INPUT,
    'display': pairing.PairingDelegate.DISPLAY_OUTPUT_ONLY,
    'yesno': pairing.PairingDelegate.DISPLAY_OUTPUT_AND_YES_NO_INPUT,
    'keyboard': pairing.PairingDelegate.KEYBOARD_INPUT_ONLY,
    'kbdisplay': pairing.PairingDelegate.DISPLAY_OUTPUT_AND_KEYBOARD_INPUT,
}


class BandPairingDelegate(pairing.PairingDelegate):
    """The band's side of pairing: a fixed passkey (shown, or 'typed'), digits always accepted."""

    def __init__(self, args):
        super().__init__(io_capability=IO_CAPABILITIES[args.io],
                         local_responder_key_distribution=pairing.PairingDelegate.DEFAULT_KEY_DISTRIBUTION
                         | pairing.PairingDelegate.KeyDistribution.DISTRIBUTE_SIGNING_KEY)
        self.passkey = args.passkey

    async def generate_passkey(self) -> int:
        log.warning('PASSKEY %06d', self.passkey)
        return self.passkey

    async def get_number(self) -> int | None:
        return self.passkey

    async def compare_numbers(self, number: int, digits: int) -> bool:
        log.warning('COMPARE %06d', number)
        return True


def make_device(band: Band, args, hci_source=None, hci_sink=None) -> Device:
    config = DeviceConfiguration()
    config.name = NAME
    config.address = hci.Address(args.address, hci.Address.RANDOM_DEVICE_ADDRESS)
    config.advertising_data = bytes(AdvertisingData([
        (AdvertisingData.FLAGS, bytes([0x06])),  # LE General Discoverable, BR/EDR not supported
        (AdvertisingData.COMPLETE_LOCAL_NAME, NAME.encode()),
        (AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS, struct.pack('<H', 0xFEE7)),
    ]))
    config.scan_response_data = bytes(AdvertisingData([
        (AdvertisingData.MANUFACTURER_SPECIFIC_DATA, struct.pack('<H', 0xFFFF) + b'band'),
    ]))
    config.advertising_interval_min = config.advertising_interval_max = 100
    if hci_source is not None:
        device = Device.from_config_with_hci(config, hci_source, hci_sink)
    else:
        device = Device(config=config)
    device.gatt_server.max_mtu = args.mtu
    device.add_services(band.services())
    # Pairing as a real band would: bonding, MITM when it has IO, SC unless --pairing legacy.
    device.pairing_config_factory = lambda connection: pairing.PairingConfig(
        sc=args.pairing == 'sc', mitm=args.io != 'noio', bonding=True, delegate=BandPairingDelegate(args))
    if args.keystore:
        # Bonds survive a restart of the band; an empty file: the band has lost them.
        device.keystore = JsonKeyStore(namespace='band', filename=args.keystore)
    device.on('pairing', lambda *a: log.warning('PAIRED'))
    device.on('pairing_failure', lambda *a: log.warning('PAIRING FAILED %s', a))
    return device


async def watch_pid(pid: int, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            stop.set()
            return
        await asyncio.sleep(0.5)


async def amain(args) -> int:
    band = Band(args)
    if not args.transport:
        device = make_device(band, args)
        write_dump(device, args)
        return 0
    transport = await asyncio.wait_for(open_transport(args.transport), 5)
    device = make_device(band, args, transport.source, transport.sink)
    band.device = device
    write_dump(device, args)
    device.on('disconnection', lambda *_: None)

    def on_connection(connection):
        log.info('connected: %s mtu limit %d', connection.peer_address, args.mtu)
        connection.on('disconnection', lambda reason: band.on_disconnection(connection.handle))
    device.on('connection', on_connection)

    await asyncio.wait_for(device.power_on(), 5)
    # Keep advertising after each disconnection so the next test can connect again.
    await device.start_advertising(auto_restart=True)
    print(f'READY {args.address}', flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(band.vanish.wait())]
    if args.watch_pid:
        waiters.append(asyncio.ensure_future(watch_pid(args.watch_pid, stop)))
    await asyncio.wait(waiters, timeout=args.timeout or None, return_when=asyncio.FIRST_COMPLETED)
    if band.vanish.is_set():
        log.warning('vanishing after %d writes', band.writes)
    # Closing the H4 connection powers the controller off: the peer sees reason 0x08.
    await transport.close()
    for w in waiters:
        w.cancel()
    return 0


def write_dump(device: Device, args) -> None:
    if args.dump_gatt:
        with open(args.dump_gatt, 'w') as f:
            json.dump(gatt_json(device, args.address), f, indent=1)
            f.write('\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('transport', nargs='?', help='Bumble transport, e.g. tcp-client:127.0.0.1:9002')
    parser.add_argument('--address', default=DEFAULT_ADDRESS, help='random static address')
    parser.add_argument('--mtu', type=int, default=517, help='largest ATT MTU accepted (23..65535)')
    parser.add_argument('--hostile', choices=['malformed-att', 'wrong-opcode', 'flood'],
                        help='misbehave: malformed ATT PDUs or wrong response opcodes around each vendor write, '
                             'or a notification flood once subscribed')
    parser.add_argument('--flood-seconds', type=float, default=10, help='how long --hostile flood lasts')
    parser.add_argument('--flood-rate', type=int, default=10000, help='notifications per second of --hostile flood')
    parser.add_argument('--layout', choices=['normal', 'moved', 'impostor'], default='normal',
                        help='impostor: same address, no vendor service (another device answering)')
    parser.add_argument('--regression', default='', help='commands (hex, comma separated) answering differently, e.g. 03')
    parser.add_argument('--vanish-after', type=int, default=0, help='power off after N vendor writes')
    parser.add_argument('--silent-after', type=int, default=0, help='stop answering after N vendor writes')
    parser.add_argument('--mute-after', type=int, default=0, help='ATT server stops sending anything after N vendor writes')
    parser.add_argument('--clock', choices=['frozen', 'real'], default='frozen',
                        help='ping uptime: frozen at 3600 s, or real seconds since start')
    parser.add_argument('--security', choices=['none', 'encryption', 'authentication'], default='none',
                        help='what the vendor commands characteristic requires before a write')
    parser.add_argument('--pairing', choices=['sc', 'legacy'], default='sc', help='LE Secure Connections or legacy only')
    parser.add_argument('--io', choices=sorted(IO_CAPABILITIES), default='noio', help='the band\'s IO capability')
    parser.add_argument('--passkey', type=int, default=123456, help='passkey the band displays or expects')
    parser.add_argument('--keystore', metavar='FILE', help='keep bonds in this Bumble JSON key store')
    parser.add_argument('--dump-gatt', metavar='FILE', help='write the GATT database as bluesift gatt JSON')
    parser.add_argument('--timeout', type=float, default=0, help='exit after this many seconds (0: never)')
    parser.add_argument('--watch-pid', type=int, default=0, help='exit when this process is gone')
    parser.add_argument('--log-level', default='WARNING')
    args = parser.parse_args()
    args.mtu = max(23, min(65535, args.mtu))
    logging.basicConfig(level=args.log_level.upper(), format='%(asctime)s %(name)s %(levelname)s %(message)s')
    sys.exit(asyncio.run(amain(args)))


if __name__ == '__main__':
    # Swift's Process starts children with signals blocked: unblock so `stop` can TERM us.
    import signal as _signal
    _signal.pthread_sigmask(_signal.SIG_UNBLOCK, {_signal.SIGTERM, _signal.SIGINT})
    main()
