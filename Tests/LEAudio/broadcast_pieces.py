#!/usr/bin/env python3
"""Generates Tests/LEAudio/le_audio_broadcast_pieces.btsnoop and broadcast_pieces.json: a
broadcast sink's scan in which the controller reports each Auracast source's extended
advertising data in pieces (LE Extended Advertising Report, Core 6.0 Vol 4 Part E §7.7.65.13,
Data_Status 0b01 "more to come" then 0b00), every packet built by Google Bumble's HCI classes
and every LE Audio value by its profile classes; the JSON holds Bumble's parse of each whole
data (BroadcastAudioAnnouncement.from_bytes, PublicBroadcastAnnouncement.from_bytes,
AdvertisingData.from_bytes for the Broadcast_Name) and the frame that completes it.

    .venv/bin/python Tests/LEAudio/broadcast_pieces.py OUT.btsnoop VALUES.json

Bumble 0.0.236's virtual controller never splits advertising data (it reports Data_Status 0
with the whole data), so the reports are scripted here. Source A (SID 3) sends 278 octets:
its Broadcast Audio Announcement, a Public Broadcast Announcement with a long Program_Info and
a Broadcast_Name, in three reports (229 octets, the most an event carries, then 40, then the
rest); source B (another address, SID 1) sends its data in two reports between A's. No
randomness: the records' bytes are the same on every run (the btsnoop time stamps are the run's).
"""
from __future__ import annotations

import json
import sys

from bumble import core, hci
from bumble.profiles import bap, le_audio, pbp
from bumble.snoop import BtSnooper, Snooper

A = hci.Address('F1:A2:B3:C4:D5:E6', hci.Address.RANDOM_DEVICE_ADDRESS)
B = hci.Address('F1:A2:B3:C4:D5:01', hci.Address.RANDOM_DEVICE_ADDRESS)


def source_data(broadcast_id: int, program: str, name: str, features: int) -> bytes:
    md = le_audio.Metadata([le_audio.Metadata.Entry(le_audio.Metadata.Tag.PROGRAM_INFO, program.encode()),
                            le_audio.Metadata.Entry(le_audio.Metadata.Tag.LANGUAGE, b'eng')])
    return (bap.BroadcastAudioAnnouncement(broadcast_id).get_advertising_data()
            + pbp.PublicBroadcastAnnouncement(pbp.PublicBroadcastAnnouncement.Features(features), md).get_advertising_data()
            + bytes(core.AdvertisingData([(core.AdvertisingData.BROADCAST_NAME, name.encode())])))


def report(address: hci.Address, sid: int, status: int, data: bytes) -> hci.HCI_LE_Extended_Advertising_Report_Event:
    # Event_Type: bit 0 connectable no, bits 5-6 Data_Status (§7.7.65.13).
    return hci.HCI_LE_Extended_Advertising_Report_Event(reports=[hci.HCI_LE_Extended_Advertising_Report_Event.Report(
        event_type=status << 5, address_type=address.address_type, address=address, primary_phy=1, secondary_phy=2,
        advertising_sid=sid, tx_power=0x7F, rssi=-58, periodic_advertising_interval=0x0050, direct_address_type=0,
        direct_address=hci.Address.ANY, data=data)])


def parse(data: bytes) -> dict:
    """Bumble's parse of one source's whole advertising data."""
    ad = core.AdvertisingData.from_bytes(data)
    out: dict = {'octets': len(data)}
    for uuid, value in ad.get_all(core.AdvertisingData.SERVICE_DATA_16_BIT_UUID):
        if uuid == bap.gatt.GATT_BROADCAST_AUDIO_ANNOUNCEMENT_SERVICE:
            out['broadcast_id'] = bap.BroadcastAudioAnnouncement.from_bytes(value).broadcast_id
        elif uuid == bap.gatt.GATT_PUBLIC_BROADCAST_ANNOUNCEMENT_SERVICE:
            p = pbp.PublicBroadcastAnnouncement.from_bytes(value)
            F = pbp.PublicBroadcastAnnouncement.Features
            out['encrypted'] = bool(p.features & F.ENCRYPTED)
            out['standard_quality'] = bool(p.features & F.STANDARD_QUALITY_CONFIGURATION)
            out['high_quality'] = bool(p.features & F.HIGH_QUALITY_CONFIGURATION)
            for e in p.metadata.entries:
                if e.tag == le_audio.Metadata.Tag.PROGRAM_INFO:
                    out['program_info'] = e.data.decode()
                elif e.tag == le_audio.Metadata.Tag.LANGUAGE:
                    out['language'] = e.data.decode()
    out['broadcast_name'] = ad.get(core.AdvertisingData.BROADCAST_NAME)
    return out


def main() -> None:
    out_path, values_path = sys.argv[1], sys.argv[2]
    a = source_data(0x5A17C3, ('Boarding calls for flights to Lisbon, Porto and Faro; the lounge announcements follow. ' * 3)[:230],
                    'Gate 12 Lounge, Terminal 2', 0b011)
    b = source_data(0x0BADF0, 'Gate 14', 'Gate 14', 0b100)
    assert len(a) > 229 + 40, len(a)
    packets = [
        report(A, 3, 1, a[:229]),
        report(B, 1, 1, b[:10]),
        report(A, 3, 1, a[229:269]),
        report(B, 1, 0, b[10:]),
        report(A, 3, 0, a[269:]),
    ]
    with open(out_path, 'wb') as f:
        snooper = BtSnooper(f)
        for p in packets:
            snooper.snoop(bytes(p), Snooper.Direction.CONTROLLER_TO_HOST)
    values = [dict(frame=4, pieces=2, **parse(b)), dict(frame=5, pieces=3, **parse(a))]
    with open(values_path, 'w') as f:
        json.dump(values, f, indent=1)
        f.write('\n')


if __name__ == '__main__':
    main()
