#!/usr/bin/env python3
"""Generates Tests/LEAudio/le_audio_control.btsnoop: a phone (Google Bumble host on an
in-process virtual link) pairs with a hearing device running Bumble's own CSIS (plain-text
SIRK), BASS, VCS, TMAS, GMAS and MCS servers, discovers them, reads every value, writes the
Volume Control Point (Set Absolute Volume, Mute), the Media Control Point (Play) and the
Broadcast Audio Scan Control Point (Set Broadcast_Code), and reads the SIRK. The phone's HCI
is written as btsnoop: key material (SIRK, Broadcast_Code) in real ATT PDUs for `redact`,
and control-profile values for `dump`.

    .venv/bin/python Tests/LEAudio/control_session.py OUT.btsnoop

Timestamps differ from run to run; the bytes of every PDU and the record order do not.
"""
from __future__ import annotations

import asyncio
import sys

from bumble import gatt, hci
from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.device import Device, Peer
from bumble.host import Host
from bumble.link import LocalLink
from bumble.profiles import bass, csip, gmap, mcp, tmap, vcs
from bumble.snoop import BtSnooper
from bumble.transport.common import AsyncPipeSink

PHONE = 'C0:B1:5F:00:00:01'
HEARING = 'C0:B1:5F:00:00:03'
SIRK = bytes.fromhex('457d7d09213e7c0c5e8fd5a4b8ec6e91')
BROADCAST_CODE = b'bluesift-code!42'


async def settle(seconds=0.05):
    await asyncio.sleep(seconds)


async def run(out_path: str) -> None:
    link = LocalLink()
    controllers = [Controller('phone', link=link), Controller('hearing', link=link)]
    phone, dev = [Device(address=hci.Address(a), host=Host(c, AsyncPipeSink(c))) for a, c in zip((PHONE, HEARING), controllers)]
    phone.name, dev.name = 'bluesift-phone', 'bluesift-hearing'
    out = open(out_path, 'wb')
    phone.host.snooper = BtSnooper(out)

    dev.add_service(csip.CoordinatedSetIdentificationService(SIRK, csip.SirkType.PLAINTEXT, coordinated_set_size=2, set_member_lock=csip.MemberLock.UNLOCKED, set_member_rank=1))
    dev.add_service(bass.BroadcastAudioScanService())
    volume = vcs.VolumeControlService(volume_setting=64)
    dev.add_service(volume)
    dev.add_service(tmap.TelephonyAndMediaAudioService(tmap.Role.CALL_TERMINAL | tmap.Role.UNICAST_MEDIA_RECEIVER))
    dev.add_service(gmap.GamingAudioService(gmap.GmapRole.UNICAST_GAME_TERMINAL, ugt_features=gmap.UgtFeatures.UGT_SINK | gmap.UgtFeatures.UGT_64_KBPS_SINK))
    dev.add_service(mcp.MediaControlService('bluesift player'))

    await phone.power_on()
    await dev.power_on()
    await dev.start_advertising(auto_restart=False)
    conn = await phone.connect(HEARING, transport=PhysicalTransport.LE)
    await settle()
    await conn.pair()
    await settle()
    peer = Peer(conn)
    await peer.request_mtu(247)
    await peer.discover_services()
    await peer.discover_characteristics()
    for s in peer.services:
        for ch in s.characteristics:
            if ch.properties & gatt.Characteristic.Properties.READ:
                try:
                    await ch.read_value()
                except Exception as e:  # noqa: BLE001 - a refused read is part of the capture
                    print(f'read {ch.uuid}: {e}', file=sys.stderr)
    vcs_proxy = peer.create_service_proxy(vcs.VolumeControlServiceProxy)
    await vcs_proxy.volume_state.subscribe(lambda v: None)
    await vcs_proxy.volume_control_point.write_value(bytes([vcs.VolumeControlPointOpcode.SET_ABSOLUTE_VOLUME, 0, 200]), with_response=True)
    await settle()
    await vcs_proxy.volume_control_point.write_value(bytes([vcs.VolumeControlPointOpcode.MUTE, 1]), with_response=True)
    await settle()
    mcs_proxy = peer.create_service_proxy(mcp.MediaControlServiceProxy)
    await mcs_proxy.subscribe_characteristics()
    await mcs_proxy.write_control_point(mcp.MediaControlPointOpcode.PLAY)
    await settle()
    bass_proxy = peer.create_service_proxy(bass.BroadcastAudioScanServiceProxy)
    await bass_proxy.send_control_point_operation(bass.SetBroadcastCodeOperation(1, BROADCAST_CODE))
    await settle()
    await conn.disconnect()
    await settle()
    out.close()


if __name__ == '__main__':
    asyncio.run(run(sys.argv[1]))
