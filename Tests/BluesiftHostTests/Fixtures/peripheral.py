#!/usr/bin/env python3
"""Test-only peer for BluesiftHostTests (not the band device: see Tests/VirtualDevice).

One Bumble virtual link in one process: controller C0 speaks H4 on tcp-server:127.0.0.1:PORT
for the host under test; controller C1 carries a tiny GATT peripheral named "bluesift-test".

  usage: peripheral.py PORT [--legacy-reports]

Gaps of the stock controller handled here (shared/notes/virtual-controller.md):
- C0 fragments ACL data towards its host to 27 bytes, so reassembly is exercised.
- --legacy-reports clears C0's extended-advertising feature bit (legacy reports, 0x02);
  without it C0 answers a legacy scan with extended reports (0x0D).
"""
import asyncio
import os
import signal
import sys

from bumble import hci
from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.host import Host
from bumble.link import LocalLink
from bumble.transport import open_transport
from bumble.transport.common import AsyncPipeSink

SERVICE_UUID = "b1e5f7a0-5e57-4c0d-9a11-000000000001"
CHAR_UUID = "b1e5f7a0-5e57-4c0d-9a11-000000000002"
PERIPHERAL_ADDRESS = "C0:BA:5E:00:00:01"
# 60 bytes: longer than MTU 23 allows in one Read Response, so reads go on with Read Blob.
INITIAL_VALUE = bytes(range(60))


class FragmentingController(Controller):
    """Splits ACL data to the host into 27-byte fragments (PB 0b10 then 0b01)."""

    def on_link_acl_data(self, sender_address, transport, data):
        if transport != PhysicalTransport.LE:
            return super().on_link_acl_data(sender_address, transport, data)
        connection = self.le_connections.get(sender_address)
        if connection is None:
            return
        for offset in range(0, len(data), 27):
            chunk = data[offset:offset + 27]
            pb = 0b10 if offset == 0 else 0b01
            self.send_hci_packet(hci.HCI_AclDataPacket(connection.handle, pb, 0, len(chunk), chunk))


async def exit_when_orphaned(parent, limit=120):
    """Never outlive the test process (or two minutes)."""
    for _ in range(limit * 2):
        if os.getppid() != parent:
            break
        await asyncio.sleep(0.5)
    os._exit(0)


async def main():
    # Swift's Process starts children with the spawning thread's signal mask (mostly
    # blocked): unblock so SIGTERM ends this script.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, set(range(1, signal.NSIG)) - {signal.SIGKILL, signal.SIGSTOP})
    asyncio.get_running_loop().create_task(exit_when_orphaned(os.getppid()))
    port = int(sys.argv[1])
    legacy = "--legacy-reports" in sys.argv[2:]
    link = LocalLink()

    transport = await open_transport(f"tcp-server:127.0.0.1:{port}")
    central = FragmentingController("C0", host_source=transport.source, host_sink=transport.sink, link=link)
    if legacy:
        central.le_features = central.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING

    peripheral_controller = Controller("C1", link=link, public_address=PERIPHERAL_ADDRESS)
    device = Device(address=hci.Address(PERIPHERAL_ADDRESS),
                    host=Host(peripheral_controller, AsyncPipeSink(peripheral_controller)))
    device.name = "bluesift-test"

    state = {"value": INITIAL_VALUE}

    def on_read(_connection):
        return state["value"]

    def on_write(connection, value):
        if bytes(value) == b"bye":  # lets a test see the peer drop the link
            asyncio.get_running_loop().create_task(connection.disconnect())
            return
        state["value"] = bytes(value)
        # Echo every write back as a notification and an indication (to subscribers only).
        asyncio.get_running_loop().create_task(device.notify_subscribers(characteristic, b"ack:" + bytes(value)))
        asyncio.get_running_loop().create_task(device.indicate_subscribers(characteristic, b"ind:" + bytes(value)))

    characteristic = Characteristic(
        CHAR_UUID,
        Characteristic.Properties.READ | Characteristic.Properties.WRITE
        | Characteristic.Properties.WRITE_WITHOUT_RESPONSE | Characteristic.Properties.NOTIFY
        | Characteristic.Properties.INDICATE,
        Characteristic.READABLE | Characteristic.WRITEABLE,
        CharacteristicValue(read=on_read, write=on_write),
    )
    device.add_service(Service(SERVICE_UUID, [characteristic]))

    await device.power_on()
    advertising_data = bytes([2, 0x01, 0x06]) + bytes([1 + len(device.name), 0x09]) + device.name.encode()
    device.advertising_data = advertising_data
    await device.start_advertising(auto_restart=True, advertising_data=advertising_data)
    print(f"READY {port}", flush=True)
    await asyncio.get_running_loop().create_future()


if __name__ == "__main__":
    asyncio.run(main())
