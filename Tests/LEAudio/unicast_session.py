#!/usr/bin/env python3
"""Generates Captures/le_audio_unicast.btsnoop: an LE Audio unicast session between two
Google Bumble hosts on one in-process virtual link. The headset runs Bumble's own PACS and
ASCS servers (a Sink ASE and a Source ASE); the phone, as BAP unicast client, discovers
them, reads the PAC records, audio locations and contexts, and drives both ASEs through
Config Codec (16_2), Config QoS (16_2_1), Enable, CIS setup (Set CIG Parameters, Create
CIS, Setup ISO Data Path), Receiver Start Ready, streaming in both directions, Disable,
Receiver Stop Ready and Release. The phone's HCI is written as btsnoop.

    .venv/bin/python Tests/LEAudio/unicast_session.py OUT.btsnoop [--values VALUES.json]

--values writes every LE Audio value on the phone's ATT bearer (frame number in the
capture, kind, bytes) for bumble_vectors.py --capture-values, so the oracle compares what
bluesift decodes of this capture with Bumble's parse of the same bytes.

The stock virtual controller drops host ISO data and answers CIS Established with all-zero
parameters (../shared notes). LEAudioRigController fills both, and these values are the
rig's, not a radio's:
  * CIS Established: ISO_Interval = SDU interval / 1.25 ms; NSE = RTN + 1; BN 1 per
    direction with a non-zero Max_SDU (0 otherwise); FT = ceil(max transport latency /
    ISO interval); Max_PDU = Max_SDU; CIS_Sync_Delay = CIG_Sync_Delay = NSE × 500 µs;
    Transport_Latency = CIG_Sync_Delay + FT × ISO_Interval − SDU_Interval (Core 6.0 Vol 6
    Part G §3.2.2, unframed); PHYs as the CIG asked.
  * ISO data: each SDU the phone sends reaches the headset's host and the reverse, split in
    27-octet packets (first fragment with a Time_Stamp, the anchor of its ISO interval:
    Packet_Sequence_Number × SDU interval), Number Of Completed Packets back to the sender.
  * Loss on purpose, towards the phone: SDU 5 is delivered with Packet_Status_Flag 0b10
    (lost, no data), SDU 11 is not delivered (a sequence gap).
Timestamps of the records differ from run to run; the bytes of every PDU and the record
order do not.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import math
import struct

from bumble import gatt, hci
from bumble.controller import Controller
from bumble.core import PhysicalTransport
from bumble.device import CigParameters, Device, Peer
from bumble.host import Host
from bumble.link import LocalLink
from bumble.profiles import ascs, bap, le_audio, pacs
from bumble.snoop import BtSnooper
from bumble.transport.common import AsyncPipeSink

PHONE = 'C0:B1:5F:00:00:01'
HEADSET = 'C0:B1:5F:00:00:02'
SDUS = 16
ISO_FRAGMENT = 27
LOST_FLAGGED = 5   # towards the phone: delivered as Packet_Status_Flag 0b10
LOST_GAP = 11      # towards the phone: never delivered
SUB_EVENT_US = 500
# The CIG/CIS/BIG commands and LE Meta subevents whose parameters go to the oracle.
HCI_COMMANDS = {0x2062, 0x2064, 0x2065, 0x2066, 0x2067, 0x2068, 0x206A, 0x206B, 0x206C, 0x206F, 0x2061}
HCI_SUBEVENTS = {0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E}

# CIG parameters as the phone sets them, shared with the peer controller (a real one gets
# them in LL_CIS_REQ).
CIGS: dict[int, dict] = {}


class LEAudioRigController(Controller):
    iso_data_packet_length = ISO_FRAGMENT
    le_features = Controller.le_features & ~hci.LeFeatureMask.LE_EXTENDED_ADVERTISING

    def on_hci_le_set_cig_parameters_command(self, command):
        CIGS[command.cig_id] = {
            'sdu_interval_c_to_p': command.sdu_interval_c_to_p, 'sdu_interval_p_to_c': command.sdu_interval_p_to_c,
            'lat_c_to_p': command.max_transport_latency_c_to_p, 'lat_p_to_c': command.max_transport_latency_p_to_c,
            'cis': {cid: dict(max_sdu_c_to_p=a, max_sdu_p_to_c=b, phy_c_to_p=c, phy_p_to_c=d, rtn_c_to_p=e, rtn_p_to_c=f)
                    for cid, a, b, c, d, e, f in zip(command.cis_id, command.max_sdu_c_to_p, command.max_sdu_p_to_c,
                                                     command.phy_c_to_p, command.phy_p_to_c, command.rtn_c_to_p, command.rtn_p_to_c)},
        }
        return super().on_hci_le_set_cig_parameters_command(command)

    def on_le_cis_established(self, cig_id, cis_id):
        link = next(c for c in list(self.central_cis_links.values()) + list(self.peripheral_cis_links.values())
                    if c.cis_id == cis_id and c.cig_id == cig_id)
        g = CIGS[cig_id]
        c = g['cis'][cis_id]
        interval = g['sdu_interval_c_to_p'] or g['sdu_interval_p_to_c']
        iso_interval = interval // 1250
        nse = min(31, max(c['rtn_c_to_p'], c['rtn_p_to_c']) + 1)
        sync_delay = nse * SUB_EVENT_US
        ft_c = max(1, math.ceil(g['lat_c_to_p'] * 1000 / interval))
        ft_p = max(1, math.ceil(g['lat_p_to_c'] * 1000 / interval))
        self.send_hci_packet(hci.HCI_LE_CIS_Established_Event(
            status=hci.HCI_ErrorCode.SUCCESS, connection_handle=link.handle, cig_sync_delay=sync_delay, cis_sync_delay=sync_delay,
            transport_latency_c_to_p=sync_delay + ft_c * interval - g['sdu_interval_c_to_p'],
            transport_latency_p_to_c=sync_delay + ft_p * interval - g['sdu_interval_p_to_c'],
            phy_c_to_p=c['phy_c_to_p'], phy_p_to_c=c['phy_p_to_c'], nse=nse,
            bn_c_to_p=1 if c['max_sdu_c_to_p'] else 0, bn_p_to_c=1 if c['max_sdu_p_to_c'] else 0,
            ft_c_to_p=ft_c, ft_p_to_c=ft_p, max_pdu_c_to_p=c['max_sdu_c_to_p'], max_pdu_p_to_c=c['max_sdu_p_to_c'],
            iso_interval=iso_interval))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # ISO SDUs from the host being reassembled, by handle.
        self.pending: dict[int, list] = {}

    def on_hci_packet(self, packet):
        if not isinstance(packet, hci.HCI_IsoDataPacket):
            return super().on_hci_packet(packet)
        self.send_hci_packet(hci.HCI_Number_Of_Completed_Packets_Event(
            connection_handles=[packet.connection_handle], num_completed_packets=[1]))
        if packet.pb_flag in (0b00, 0b10):
            self.pending[packet.connection_handle] = [packet.packet_sequence_number, packet.iso_sdu_length, bytearray()]
        state = self.pending.get(packet.connection_handle)
        if state is None:
            return
        state[2] += packet.iso_sdu_fragment
        if packet.pb_flag in (0b10, 0b11):
            del self.pending[packet.connection_handle]
            self.deliver(packet.connection_handle, state[0], bytes(state[2]))

    def deliver(self, handle, sequence, sdu):
        link = self.find_iso_link_by_handle(handle)
        if link is None or link.acl_connection is None:
            return
        peer = self.link.find_le_controller(link.acl_connection.peer_address)
        back = next((c for c in list(peer.central_cis_links.values()) + list(peer.peripheral_cis_links.values())
                     if c.cig_id == link.cig_id and c.cis_id == link.cis_id), None) if peer else None
        if back is None:
            return
        to_phone = peer.name == 'phone'
        if to_phone and sequence == LOST_GAP:
            return
        g = CIGS[link.cig_id]
        interval = g['sdu_interval_p_to_c'] if to_phone else g['sdu_interval_c_to_p']
        time_stamp = (0x10000 + sequence * interval) & 0xFFFFFFFF
        if to_phone and sequence == LOST_FLAGGED:
            # Bumble 0.0.236 shifts Packet_Status_Flag by 15 bits, not 14 (§5.4.5): the flag
            # goes in with the length field so the bytes are the specification's.
            peer.send_hci_packet(hci.HCI_IsoDataPacket(connection_handle=back.handle, data_total_length=8, pb_flag=0b10,
                                                       time_stamp=time_stamp, packet_sequence_number=sequence, iso_sdu_length=0b10 << 14,
                                                       packet_status_flag=0, iso_sdu_fragment=b''))
            return
        first = ISO_FRAGMENT - 8
        chunks = [sdu[:first]] + [sdu[i:i + ISO_FRAGMENT] for i in range(first, len(sdu), ISO_FRAGMENT)]
        for i, chunk in enumerate(chunks):
            last = i == len(chunks) - 1
            if i == 0:
                p = hci.HCI_IsoDataPacket(connection_handle=back.handle, data_total_length=8 + len(chunk), pb_flag=0b10 if last else 0b00,
                                          time_stamp=time_stamp, packet_sequence_number=sequence, iso_sdu_length=len(sdu),
                                          packet_status_flag=0, iso_sdu_fragment=chunk)
            else:
                p = hci.HCI_IsoDataPacket(connection_handle=back.handle, data_total_length=len(chunk), pb_flag=0b11 if last else 0b01,
                                          iso_sdu_fragment=chunk)
            peer.send_hci_packet(p)


def config_16_2(location):
    return bap.CodecSpecificConfiguration(sampling_frequency=bap.SamplingFrequency.FREQ_16000,
                                          frame_duration=bap.FrameDuration.DURATION_10000_US,
                                          audio_channel_allocation=location, octets_per_codec_frame=40, codec_frames_per_sdu=1)


async def settle(seconds=0.05):
    await asyncio.sleep(seconds)


async def run(out_path: str, values_path: str | None) -> None:
    link = LocalLink()
    controllers = [LEAudioRigController('phone', link=link), LEAudioRigController('headset', link=link)]
    phone, headset = [Device(address=hci.Address(a), host=Host(c, AsyncPipeSink(c))) for a, c in zip((PHONE, HEADSET), controllers)]
    phone.name, headset.name = 'bluesift-phone', 'bluesift-earbud'
    out = open(out_path, 'wb')
    phone.host.snooper = BtSnooper(out)

    # The headset: PACS (one LC3 record per direction) and ASCS (Sink ASE 1, Source ASE 2).
    caps = bap.CodecSpecificCapabilities(
        supported_sampling_frequencies=bap.SupportedSamplingFrequency.FREQ_16000 | bap.SupportedSamplingFrequency.FREQ_24000
        | bap.SupportedSamplingFrequency.FREQ_48000,
        supported_frame_durations=bap.SupportedFrameDuration.DURATION_10000_US_SUPPORTED,
        supported_audio_channel_count=[1], min_octets_per_codec_frame=40, max_octets_per_codec_frame=120,
        supported_max_codec_frames_per_sdu=1)
    ctx = bap.ContextType.MEDIA | bap.ContextType.CONVERSATIONAL
    headset.add_service(pacs.PublishedAudioCapabilitiesService(
        supported_source_context=ctx, supported_sink_context=ctx, available_source_context=ctx, available_sink_context=ctx,
        sink_pac=[pacs.PacRecord(hci.CodingFormat(hci.CodecID.LC3), caps)], sink_audio_locations=bap.AudioLocation.FRONT_LEFT,
        source_pac=[pacs.PacRecord(hci.CodingFormat(hci.CodecID.LC3), caps)], source_audio_locations=bap.AudioLocation.FRONT_LEFT))
    service = ascs.AudioStreamControlService(headset, sink_ase_id=[1], source_ase_id=[2])
    headset.add_service(service)

    await phone.power_on()
    await headset.power_on()
    await headset.start_advertising(auto_restart=False)
    phone_conn = await phone.connect(HEADSET, transport=PhysicalTransport.LE)
    await settle()
    headset_conn = next(iter(headset.connections.values()))
    headset_received: list = []
    phone_received: list = []

    peer = Peer(phone_conn)
    # BAP 1.0.1 §8.1: ATT_MTU of at least 64 for the unicast roles.
    await peer.request_mtu(517)
    await peer.discover_services()
    await peer.discover_characteristics()
    pacs_proxy = peer.create_service_proxy(pacs.PublishedAudioCapabilitiesServiceProxy)
    ascs_proxy = peer.create_service_proxy(ascs.AudioStreamControlServiceProxy)

    # Handle → what the value is, for --values.
    kinds = {}
    for ch in peer.get_characteristics_by_uuid(gatt.GATT_SINK_PAC_CHARACTERISTIC) + peer.get_characteristics_by_uuid(gatt.GATT_SOURCE_PAC_CHARACTERISTIC):
        kinds[ch.handle] = 'pac'
    for ch in ascs_proxy.sink_ase + ascs_proxy.source_ase:
        kinds[ch.handle] = 'ase_state'
    cp = ascs_proxy.ase_control_point
    kinds[cp.handle] = 'ase_cp'

    for proxy in (pacs_proxy.sink_pac, pacs_proxy.source_pac, pacs_proxy.sink_audio_locations, pacs_proxy.source_audio_locations,
                  pacs_proxy.available_audio_contexts, pacs_proxy.supported_audio_contexts):
        await proxy.read_value()
    notified = asyncio.Queue()
    for ch in ascs_proxy.sink_ase + ascs_proxy.source_ase + [cp]:
        await ch.subscribe(lambda value, h=ch.handle: notified.put_nowait((h, value)))
    await settle()

    async def write(op):
        await cp.write_value(bytes(op), with_response=True)
        await settle()

    sink_ase, source_ase = 1, 2
    lc3 = hci.CodingFormat(hci.CodecID.LC3)
    await write(ascs.ASE_Config_Codec(ase_id=[sink_ase, source_ase], target_latency=[1, 1], target_phy=[2, 2], codec_id=[lc3, lc3],
                                      codec_specific_configuration=[bytes(config_16_2(bap.AudioLocation.FRONT_LEFT))] * 2))
    # 16_2_1: 10 ms, unframed, 2M, 40 octets, RTN 2, 10 ms, 40 ms presentation delay.
    await write(ascs.ASE_Config_QOS(ase_id=[sink_ase, source_ase], cig_id=[1, 1], cis_id=[1, 1], sdu_interval=[10000, 10000],
                                    framing=[0, 0], phy=[2, 2], max_sdu=[40, 40], retransmission_number=[2, 2],
                                    max_transport_latency=[10, 10], presentation_delay=[40000, 40000]))
    media = le_audio.Metadata([le_audio.Metadata.Entry(le_audio.Metadata.Tag.STREAMING_AUDIO_CONTEXTS, struct.pack('<H', bap.ContextType.MEDIA))])
    # A Config Codec in QoS Configured... is allowed; a Receiver Start Ready now is not: the
    # server answers Invalid ASE State Machine Transition (an error on record).
    await write(ascs.ASE_Receiver_Start_Ready(ase_id=[source_ase]))
    await write(ascs.ASE_Enable(ase_id=[sink_ase, source_ase], metadata=[bytes(media)] * 2))

    cis_handles = await phone.setup_cig(CigParameters(
        cig_id=1, sdu_interval_c_to_p=10000, sdu_interval_p_to_c=10000, max_transport_latency_c_to_p=10, max_transport_latency_p_to_c=10,
        cis_parameters=[CigParameters.CisParameters(cis_id=1, max_sdu_c_to_p=40, max_sdu_p_to_c=40, phy_c_to_p=2, phy_p_to_c=2,
                                                   rtn_c_to_p=2, rtn_p_to_c=2)]))
    cis_links = await phone.create_cis([(cis_handles[0], phone_conn)])
    cis = cis_links[0]
    await settle(0.1)
    await cis.setup_data_path(direction=cis.Direction.HOST_TO_CONTROLLER)
    await cis.setup_data_path(direction=cis.Direction.CONTROLLER_TO_HOST)
    await write(ascs.ASE_Receiver_Start_Ready(ase_id=[source_ase]))
    await settle(0.1)

    phone.host.on('iso_packet', lambda h, p: phone_received.append(p))
    headset.host.on('iso_packet', lambda h, p: headset_received.append(p))
    headset_cis = next(iter(headset.cis_links.values()))
    for n in range(SDUS):
        cis.write(bytes([n]) * 40)
        headset_cis.write(bytes([0x80 | n]) * 40)
        await settle(0.01)
    await settle(0.1)

    await write(ascs.ASE_Disable(ase_id=[sink_ase, source_ase]))
    await write(ascs.ASE_Receiver_Stop_Ready(ase_id=[source_ase]))
    await write(ascs.ASE_Release(ase_id=[sink_ase, source_ase]))
    await settle(0.1)
    await phone_conn.disconnect()
    await settle(0.1)
    out.close()

    if values_path:
        write_values(out_path, values_path, kinds)


def write_values(capture: str, values_path: str, kinds: dict) -> None:
    """The LE Audio ATT values in the capture, by frame (1-based), read back from the
    btsnoop the snooper wrote (ACL on CID 4, no fragmentation across PDUs needed: the ACL
    reassembly below joins continuation fragments)."""
    data = open(capture, 'rb').read()
    off, frame, values = 16, 0, []
    partial: dict[int, bytearray] = {}
    while off + 24 <= len(data):
        orig, incl, flags, drops, ts = struct.unpack_from('>IIIIq', data, off)
        rec = data[off + 24: off + 24 + incl]
        off += 24 + incl
        frame += 1
        if rec[0] == 0x01 and struct.unpack_from('<H', rec, 1)[0] in HCI_COMMANDS:
            values.append({'frame': frame, 'kind': 'hci_command', 'hex': rec[1:].hex()})
            continue
        if rec[0] == 0x04 and rec[1] == 0x3E and rec[3] in HCI_SUBEVENTS:
            values.append({'frame': frame, 'kind': 'hci_event', 'hex': rec[1:].hex()})
            continue
        if rec[0] == 0x05:
            values.append({'frame': frame, 'kind': 'iso', 'hex': rec[1:].hex()})
            continue
        if rec[0] != 0x02:
            continue
        hdr, length = struct.unpack_from('<HH', rec, 1)
        handle, pb = hdr & 0xFFF, (hdr >> 12) & 3
        payload = rec[5:5 + length]
        if pb == 0b01:
            if handle not in partial:
                continue
            partial[handle] += payload
        else:
            partial[handle] = bytearray(payload)
        buf = partial[handle]
        if len(buf) < 4 or len(buf) < 4 + struct.unpack_from('<H', buf)[0]:
            continue
        l2len, cid = struct.unpack_from('<HH', buf)
        att = bytes(buf[4:4 + l2len])
        del partial[handle]
        if cid != 4 or not att:
            continue
        op = att[0]
        if op in (0x12, 0x52, 0x1B, 0x1D) and len(att) >= 3:
            h = struct.unpack_from('<H', att, 1)[0]
            kind = kinds.get(h)
            value = att[3:]
            if kind == 'ase_cp':
                kind = 'ase_operation' if op in (0x12, 0x52) else 'ase_response'
            if kind:
                values.append({'frame': frame, 'kind': kind, 'handle': h, 'hex': value.hex()})
        elif op == 0x0B:
            values.append({'frame': frame, 'kind': 'read', 'hex': att[1:].hex()})
    # Read responses carry no handle: pair them with the request before them.
    json.dump([v for v in values if v['kind'] != 'read'] + pair_reads(data, kinds), open(values_path, 'w'), indent=1)


def pair_reads(data: bytes, kinds: dict) -> list:
    off, frame, last_read, out = 16, 0, None, []
    while off + 24 <= len(data):
        _, incl, _, _, _ = struct.unpack_from('>IIIIq', data, off)
        rec = data[off + 24: off + 24 + incl]
        off += 24 + incl
        frame += 1
        if rec[0] != 0x02 or len(rec) < 10 or struct.unpack_from('<H', rec, 7)[0] != 4:
            continue
        att = rec[9:]
        if att[0] == 0x0A:
            last_read = struct.unpack_from('<H', att, 1)[0]
        elif att[0] == 0x0B and last_read is not None:
            kind = kinds.get(last_read)
            if kind in ('pac', 'ase_state'):
                out.append({'frame': frame, 'kind': kind, 'handle': last_read, 'hex': att[1:].hex()})
            last_read = None
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--values')
    args = ap.parse_args()
    asyncio.run(run(args.out, args.values))


if __name__ == '__main__':
    main()
