#!/usr/bin/env python3
"""Generates Tests/LEAudio/le_audio_broadcast_sink.btsnoop: an Auracast broadcast sink's HCI
as its host would log it, every packet built by Google Bumble's HCI classes and every LE
Audio value by Bumble's profile classes (BroadcastAudioAnnouncement, BasicAudioAnnouncement,
Metadata, PublicBroadcastAnnouncement's fields).

    .venv/bin/python Tests/LEAudio/broadcast_sink.py OUT.btsnoop [--values VALUES.json]

Bumble 0.0.236's virtual controller cannot run this session (../shared notes: periodic sync
on a non-zero SID never establishes, no BIGInfo reports, Setup ISO Data Path on a BIS fails),
so the controller's side is scripted here: the source (SID 3, Broadcast_ID 0x5A17C3, name
"Gate 12") is found in an extended advertising report, the sink syncs to its periodic
advertising (BASE: 48_2 in one subgroup, BIS 1 Front Left, BIS 2 Front Right, English), gets
a BIGInfo report (encrypted), syncs to the BIG with its Broadcast_Code, sets up both data
paths, receives 20 SDUs per BIS, and loses the BIG sync. Damage on purpose: BIS 2 never
delivers SDU 7 (a sequence gap), BIS 1's SDU 3 is flagged possibly invalid, BIS 1's SDU 10
comes 150 µs late by its time stamp. No time or randomness: the file is the same on every run.
"""
from __future__ import annotations

import argparse
import json
import struct

from bumble import hci
from bumble.profiles import bap, le_audio
from bumble.snoop import BtSnooper, Snooper

SOURCE = hci.Address('F1:A2:B3:C4:D5:E6', hci.Address.RANDOM_DEVICE_ADDRESS)
SID = 3
BROADCAST_ID = 0x5A17C3
SYNC = 0x0001
BIG = 0
BIS_HANDLES = [0x0010, 0x0011]
SDU_INTERVAL = 10000
SDUS = 20
CODE = bytes(range(0xA0, 0xB0))  # the Broadcast_Code: a key, hidden in bluesift's output


def base() -> bap.BasicAudioAnnouncement:
    return bap.BasicAudioAnnouncement(presentation_delay=40000, subgroups=[bap.BasicAudioAnnouncement.Subgroup(
        codec_id=hci.CodingFormat(hci.CodecID.LC3),
        codec_specific_configuration=bap.CodecSpecificConfiguration(sampling_frequency=bap.SamplingFrequency.FREQ_48000,
                                                                    frame_duration=bap.FrameDuration.DURATION_10000_US,
                                                                    octets_per_codec_frame=100, codec_frames_per_sdu=1),
        metadata=le_audio.Metadata([le_audio.Metadata.Entry(le_audio.Metadata.Tag.LANGUAGE, b'eng'),
                                    le_audio.Metadata.Entry(le_audio.Metadata.Tag.PROGRAM_INFO, b'Boarding calls')]),
        bis=[bap.BasicAudioAnnouncement.BIS(1, bap.CodecSpecificConfiguration(audio_channel_allocation=bap.AudioLocation.FRONT_LEFT)),
             bap.BasicAudioAnnouncement.BIS(2, bap.CodecSpecificConfiguration(audio_channel_allocation=bap.AudioLocation.FRONT_RIGHT))])])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--values')
    args = ap.parse_args()
    out = open(args.out, 'wb')
    snooper = BtSnooper(out)
    packets: list[tuple[bytes, bool]] = []   # (H4 bytes, sent by the host)

    def cmd(c):
        packets.append((bytes(c), True))

    def evt(e):
        packets.append((bytes(e), False))

    # PBP 1.0 §4.2: features (encrypted, standard quality), metadata with Program_Info.
    pba_md = bytes(le_audio.Metadata([le_audio.Metadata.Entry(le_audio.Metadata.Tag.PROGRAM_INFO, b'Boarding calls')]))
    adv = (bap.BroadcastAudioAnnouncement(BROADCAST_ID).get_advertising_data()
           + bytes([len(b'Gate 12') + 1, 0x30]) + b'Gate 12'
           + bytes([5 + len(pba_md), 0x16, 0x56, 0x18, 0b011, len(pba_md)]) + pba_md)
    cmd(hci.HCI_LE_Set_Extended_Scan_Enable_Command(enable=1, filter_duplicates=0, duration=0, period=0))
    evt(hci.HCI_Command_Complete_Event(num_hci_command_packets=1, command_opcode=hci.HCI_LE_SET_EXTENDED_SCAN_ENABLE_COMMAND,
                                       return_parameters=hci.HCI_StatusReturnParameters(status=0)))
    evt(hci.HCI_LE_Extended_Advertising_Report_Event(reports=[hci.HCI_LE_Extended_Advertising_Report_Event.Report(
        event_type=0, address_type=SOURCE.address_type, address=SOURCE, primary_phy=1, secondary_phy=2, advertising_sid=SID,
        tx_power=0x7F, rssi=-58, periodic_advertising_interval=0x0050, direct_address_type=0, direct_address=hci.Address.ANY, data=adv)]))
    cmd(hci.HCI_LE_Periodic_Advertising_Create_Sync_Command(options=0, advertising_sid=SID, advertiser_address_type=SOURCE.address_type,
                                                            advertiser_address=SOURCE, skip=0, sync_timeout=1000, sync_cte_type=0))
    evt(hci.HCI_Command_Status_Event(status=0, num_hci_command_packets=1, command_opcode=hci.HCI_LE_PERIODIC_ADVERTISING_CREATE_SYNC_COMMAND))
    evt(hci.HCI_LE_Periodic_Advertising_Sync_Established_Event(status=0, sync_handle=SYNC, advertising_sid=SID, advertiser_address_type=SOURCE.address_type, advertiser_address=SOURCE,
                                                               advertiser_phy=2, periodic_advertising_interval=0x0050,
                                                               advertiser_clock_accuracy=0))
    evt(hci.HCI_LE_Periodic_Advertising_Report_Event(sync_handle=SYNC, tx_power=0x7F, rssi=-60, cte_type=0xFF, data_status=0,
                                                     data=base().get_advertising_data()))
    evt(hci.HCI_LE_BIGInfo_Advertising_Report_Event(sync_handle=SYNC, num_bis=2, nse=4, iso_interval=8, bn=1, pto=0, irc=4, max_pdu=100,
                                                    sdu_interval=SDU_INTERVAL, max_sdu=100, phy=2, framing=0, encryption=1))
    cmd(hci.HCI_LE_BIG_Create_Sync_Command(big_handle=BIG, sync_handle=SYNC, encryption=1, broadcast_code=CODE, mse=0,
                                           big_sync_timeout=100, bis=[1, 2]))
    evt(hci.HCI_Command_Status_Event(status=0, num_hci_command_packets=1, command_opcode=hci.HCI_LE_BIG_CREATE_SYNC_COMMAND))
    evt(hci.HCI_LE_BIG_Sync_Established_Event(status=0, big_handle=BIG, transport_latency_big=20000, nse=4, bn=1, pto=0, irc=4,
                                              max_pdu=100, iso_interval=8, connection_handle=BIS_HANDLES))
    for h in BIS_HANDLES:
        cmd(hci.HCI_LE_Setup_ISO_Data_Path_Command(connection_handle=h, data_path_direction=1, data_path_id=0,
                                                   codec_id=hci.CodingFormat(hci.CodecID.TRANSPARENT), controller_delay=0,
                                                   codec_configuration=b''))
        evt(hci.HCI_Command_Complete_Event(num_hci_command_packets=1, command_opcode=hci.HCI_LE_SETUP_ISO_DATA_PATH_COMMAND,
                                           return_parameters=hci.HCI_StatusAndConnectionHandleReturnParameters(status=0, connection_handle=h)))
    for n in range(SDUS):
        for i, h in enumerate(BIS_HANDLES):
            if h == BIS_HANDLES[1] and n == 7:
                continue
            ts = 0x20000 + n * SDU_INTERVAL + (150 if (i == 0 and n == 10) else 0)
            status = 0b01 if (i == 0 and n == 3) else 0
            sdu = bytes([n, i]) * 50
            # Bumble 0.0.236 shifts Packet_Status_Flag by 15 (not 14, §5.4.5): it rides on the length.
            p = hci.HCI_IsoDataPacket(connection_handle=h, data_total_length=8 + len(sdu), pb_flag=0b10, time_stamp=ts,
                                      packet_sequence_number=n, iso_sdu_length=len(sdu) | status << 14, packet_status_flag=0,
                                      iso_sdu_fragment=sdu)
            packets.append((bytes(p), False))
    evt(hci.HCI_LE_BIG_Sync_Lost_Event(big_handle=BIG, reason=hci.HCI_ErrorCode.CONNECTION_TIMEOUT_ERROR))

    for raw, sent in packets:
        snooper.snoop(raw, Snooper.Direction.HOST_TO_CONTROLLER if sent else Snooper.Direction.CONTROLLER_TO_HOST)
    out.close()

    if args.values:
        values = []
        for frame, (raw, sent) in enumerate(packets, start=1):
            if raw[0] == 1 and struct.unpack_from('<H', raw, 1)[0] in (0x206B, 0x206E, 0x2044):
                values.append({'frame': frame, 'kind': 'hci_command', 'hex': raw[1:].hex()})
            elif raw[0] == 4 and raw[1] == 0x3E and raw[3] in (0x0E, 0x0F, 0x1D, 0x1E, 0x22):
                values.append({'frame': frame, 'kind': 'hci_event', 'hex': raw[1:].hex()})
                if raw[3] == 0x0F:
                    # The BASE inside the periodic advertising data (after the 0x1851 UUID).
                    data = raw[4 + 7:]
                    values.append({'frame': frame, 'kind': 'base', 'hex': data[4:].hex()})
            elif raw[0] == 4 and raw[1] == 0x3E and raw[3] == 0x0D:
                values.append({'frame': frame, 'kind': 'broadcast_audio_announcement', 'hex': adv[4:7].hex()})
            elif raw[0] == 5:
                values.append({'frame': frame, 'kind': 'iso', 'hex': raw[1:].hex()})
        json.dump(values, open(args.values, 'w'), indent=1)


if __name__ == '__main__':
    main()
