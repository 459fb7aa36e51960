#!/usr/bin/env python3
"""LE Audio oracle vectors: values encoded by Google Bumble's own classes and parsed back by
Bumble's own parsers (`ASE_Operation.from_bytes`, `PacRecord.from_bytes`,
`CodecSpecificConfiguration.from_bytes`, `CodecSpecificCapabilities.from_bytes`,
`BasicAudioAnnouncement.from_bytes`, `BroadcastReceiveState.from_bytes`,
`ControlPointOperation.from_bytes`, `Metadata.from_bytes`, `HCI_Packet.from_bytes`).

    .venv/bin/python Tests/LEAudio/bumble_vectors.py > Tests/LEAudio/oracle_vectors.json

Each vector: profile, what, the bytes (hex) and Bumble's values under bluesift's JSON
paths ("ases.0.codec_specific_configuration.octets_per_codec_frame"). The Swift suite
LEAudioOracleTests decodes the same bytes with bluesift and compares value by value.
Bumble has no parser for ASE state values nor for the ASE Control Point notification
(see ../shared notes): those are split here with Bumble's enums and sub-parsers
(CodingFormat.parse_from_bytes, CodecSpecificConfiguration.from_bytes, Metadata.from_bytes).
--capture-values FILE adds the values of a Bumble session (unicast_session.py's JSON).
"""
from __future__ import annotations

import argparse
import json
import struct
import sys

from bumble import hci
from bumble.profiles import ascs, bap, bass, le_audio, pacs

SF = bap.SamplingFrequency
FD = bap.FrameDuration
AL = bap.AudioLocation

PRESETS = [  # BAP Table 5.2: (name, Hz, 7.5 ms?, octets)
    ('8_1', 8000, True, 26), ('8_2', 8000, False, 30), ('16_1', 16000, True, 30), ('16_2', 16000, False, 40),
    ('24_1', 24000, True, 45), ('24_2', 24000, False, 60), ('32_1', 32000, True, 60), ('32_2', 32000, False, 80),
    ('441_1', 44100, True, 97), ('441_2', 44100, False, 130), ('48_1', 48000, True, 75), ('48_2', 48000, False, 100),
    ('48_3', 48000, True, 90), ('48_4', 48000, False, 120), ('48_5', 48000, True, 117), ('48_6', 48000, False, 155),
]

vectors: list[dict] = []


def add(profile: str, what: str, data: bytes, expect: dict) -> None:
    vectors.append({'profile': profile, 'what': what, 'hex': data.hex(), 'expect': expect})


def config_fields(c: bap.CodecSpecificConfiguration, prefix: str = '') -> dict:
    out = {}
    if c.sampling_frequency is not None:
        out[prefix + 'sampling_frequency'] = int(c.sampling_frequency)
        out[prefix + 'sampling_frequency_hz'] = c.sampling_frequency.hz
    if c.frame_duration is not None:
        out[prefix + 'frame_duration'] = int(c.frame_duration)
        out[prefix + 'frame_duration_us'] = c.frame_duration.us
    if c.audio_channel_allocation is not None:
        out[prefix + 'audio_channel_allocation'] = int(c.audio_channel_allocation)
    if c.octets_per_codec_frame is not None:
        out[prefix + 'octets_per_codec_frame'] = c.octets_per_codec_frame
    if c.codec_frames_per_sdu is not None:
        out[prefix + 'codec_frame_blocks_per_sdu'] = c.codec_frames_per_sdu
    return out


def capabilities_fields(c: bap.CodecSpecificCapabilities, prefix: str = '') -> dict:
    return {
        prefix + 'supported_sampling_frequencies': int(c.supported_sampling_frequencies),
        prefix + 'supported_frame_durations': int(c.supported_frame_durations),
        prefix + 'supported_audio_channel_counts': bap.channel_counts_to_bits(c.supported_audio_channel_count),
        prefix + 'min_octets_per_codec_frame': c.min_octets_per_codec_frame,
        prefix + 'max_octets_per_codec_frame': c.max_octets_per_codec_frame,
        prefix + 'supported_max_codec_frames_per_sdu': c.supported_max_codec_frames_per_sdu,
    }


def coding_format_fields(f: hci.CodingFormat, prefix: str) -> dict:
    return {prefix + 'coding_format': int(f.codec_id), prefix + 'company_id': f.company_id,
            prefix + 'vendor_codec_id': f.vendor_specific_codec_id}


def metadata_fields(m: le_audio.Metadata, prefix: str) -> dict:
    out = {}
    T = le_audio.Metadata.Tag
    for e in m.entries:
        v = e.decode()
        key = {T.PREFERRED_AUDIO_CONTEXTS: 'preferred_audio_contexts', T.STREAMING_AUDIO_CONTEXTS: 'streaming_audio_contexts',
               T.PROGRAM_INFO: 'program_info', T.LANGUAGE: 'language', T.CCID_LIST: 'ccid_list',
               T.PARENTAL_RATING: 'parental_rating', T.PROGRAM_INFO_URI: 'program_info_uri',
               T.AUDIO_ACTIVE_STATE: 'audio_active_state', T.ASSISTED_LISTENING_STREAM: 'assisted_listening_stream',
               T.BROADCAST_NAME: 'broadcast_name'}.get(e.tag)
        if key is None:
            continue
        if isinstance(v, list):
            for i, x in enumerate(v):
                out[f'{prefix}{key}.{i}'] = x
        else:
            out[prefix + key] = int(v) if isinstance(v, int) else v
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument('--capture-values', help='values seen in a Bumble session (unicast_session.py --values)')
    ap.add_argument('--broadcast-values', help='values of the broadcast sink capture (broadcast_sink.py --values)')
    args = ap.parse_args()

    md_media = le_audio.Metadata([le_audio.Metadata.Entry(le_audio.Metadata.Tag.STREAMING_AUDIO_CONTEXTS, struct.pack('<H', bap.ContextType.MEDIA))])
    md_rich = le_audio.Metadata([
        le_audio.Metadata.Entry(le_audio.Metadata.Tag.PREFERRED_AUDIO_CONTEXTS, struct.pack('<H', bap.ContextType.MEDIA | bap.ContextType.CONVERSATIONAL)),
        le_audio.Metadata.Entry(le_audio.Metadata.Tag.LANGUAGE, b'eng'),
        le_audio.Metadata.Entry(le_audio.Metadata.Tag.PROGRAM_INFO, 'Gate 12 announcements'.encode()),
        le_audio.Metadata.Entry(le_audio.Metadata.Tag.CCID_LIST, bytes([1, 3])),
        le_audio.Metadata.Entry(le_audio.Metadata.Tag.PARENTAL_RATING, bytes([0x05])),
        le_audio.Metadata.Entry(le_audio.Metadata.Tag.BROADCAST_NAME, 'Lounge TV'.encode()),
    ])

    # BAP: every preset's codec configuration, over several allocations.
    allocs = [AL.FRONT_LEFT, AL.FRONT_RIGHT, AL.FRONT_LEFT | AL.FRONT_RIGHT, AL(0)]
    for i, (name, hz, short, octets) in enumerate(PRESETS):
        c = bap.CodecSpecificConfiguration(sampling_frequency=SF.from_hz(hz), frame_duration=FD.DURATION_7500_US if short else FD.DURATION_10000_US,
                                           audio_channel_allocation=allocs[i % len(allocs)], octets_per_codec_frame=octets, codec_frames_per_sdu=1)
        data = bytes(c)
        expect = config_fields(bap.CodecSpecificConfiguration.from_bytes(data))
        expect['preset'] = name
        add('bap_codec_configuration', name, data, expect)

    # BAP: codec capabilities.
    for freqs, durs, counts, lo, hi, fps in [([16000, 24000, 48000], 0b10, [1], 40, 120, 1), ([8000, 16000, 32000, 44100, 48000], 0b110011, [1, 2], 26, 155, 2),
                                             ([48000], 0b10, [2], 100, 100, 1)]:
        c = bap.CodecSpecificCapabilities(supported_sampling_frequencies=bap.SupportedSamplingFrequency.from_hz(freqs),
                                          supported_frame_durations=bap.SupportedFrameDuration(durs), supported_audio_channel_count=counts,
                                          min_octets_per_codec_frame=lo, max_octets_per_codec_frame=hi, supported_max_codec_frames_per_sdu=fps)
        data = bytes(c)
        add('bap_codec_capabilities', f'{freqs} {lo}-{hi}', data, capabilities_fields(bap.CodecSpecificCapabilities.from_bytes(data)))

    # PACS: PAC records (one and two records, LC3 and vendor).
    cap = bap.CodecSpecificCapabilities(supported_sampling_frequencies=bap.SupportedSamplingFrequency.from_hz([16000, 48000]),
                                        supported_frame_durations=bap.SupportedFrameDuration(0b10), supported_audio_channel_count=[1],
                                        min_octets_per_codec_frame=40, max_octets_per_codec_frame=120, supported_max_codec_frames_per_sdu=1)
    records = [pacs.PacRecord(hci.CodingFormat(hci.CodecID.LC3), cap, md_rich),
               pacs.PacRecord(hci.CodingFormat(hci.CodecID.VENDOR_SPECIFIC, 0x000F, 0x0001), b'\x02\x01\x08', le_audio.Metadata())]
    for n in (1, 2):
        data = bytes([n]) + b''.join(bytes(r) for r in records[:n])
        parsed = pacs.PacRecord.list_from_bytes(data)
        expect = {'number_of_pac_records': len(parsed)}
        for i, r in enumerate(parsed):
            p = f'pac_records.{i}.'
            expect.update(coding_format_fields(r.coding_format, p + 'codec_id.'))
            if isinstance(r.codec_specific_capabilities, bytes):
                expect[p + 'codec_specific_capabilities'] = r.codec_specific_capabilities.hex()
            else:
                expect.update(capabilities_fields(r.codec_specific_capabilities, p + 'codec_specific_capabilities.'))
            expect.update(metadata_fields(r.metadata, p + 'metadata.'))
        add('pacs_pac_records', f'{n} records', data, expect)

    # ASCS: every Control Point operation, built with Bumble's classes.
    cfg16 = bap.CodecSpecificConfiguration(sampling_frequency=SF.FREQ_16000, frame_duration=FD.DURATION_10000_US,
                                           audio_channel_allocation=AL.FRONT_LEFT, octets_per_codec_frame=40, codec_frames_per_sdu=1)
    cfg48 = bap.CodecSpecificConfiguration(sampling_frequency=SF.FREQ_48000, frame_duration=FD.DURATION_10000_US,
                                           audio_channel_allocation=AL.FRONT_RIGHT, octets_per_codec_frame=100, codec_frames_per_sdu=1)
    ops = [
        ascs.ASE_Config_Codec(ase_id=[1, 2], target_latency=[1, 3], target_phy=[2, 2],
                              codec_id=[hci.CodingFormat(hci.CodecID.LC3), hci.CodingFormat(hci.CodecID.LC3)],
                              codec_specific_configuration=[bytes(cfg16), bytes(cfg48)]),
        ascs.ASE_Config_QOS(ase_id=[1, 2], cig_id=[1, 1], cis_id=[1, 2], sdu_interval=[10000, 10000], framing=[0, 0], phy=[2, 2],
                            max_sdu=[40, 100], retransmission_number=[2, 13], max_transport_latency=[10, 95], presentation_delay=[40000, 40000]),
        ascs.ASE_Enable(ase_id=[1], metadata=[bytes(md_media)]),
        ascs.ASE_Receiver_Start_Ready(ase_id=[2]),
        ascs.ASE_Disable(ase_id=[1, 2]),
        ascs.ASE_Receiver_Stop_Ready(ase_id=[2]),
        ascs.ASE_Update_Metadata(ase_id=[1], metadata=[bytes(md_rich)]),
        ascs.ASE_Release(ase_id=[1, 2]),
    ]
    for op in ops:
        add_ase_operation(bytes(op), op.name)

    # ASCS: ASE state values in every state (Bumble's own state machine writes them).
    for state_bytes, what in ase_state_examples(cfg16, md_media):
        add_ase_state(state_bytes, what)

    # ASCS: Control Point notifications (Bumble's response enums).
    for data, what in [(bytes([1, 2, 1, 0, 0, 2, 0, 0]), 'config codec ok'),
                       (bytes([2, 2, 1, 0, 0, 2, 8, 5]), 'config qos rejected phy'),
                       (bytes([3, 1, 3, 0x0B, 0x02]), 'enable rejected metadata'),
                       (bytes([9, 0xFF, 0, 1, 0]), 'unsupported opcode')]:
        add_cp_notification(data, what)

    # BAP broadcast: BASE and Broadcast Audio Announcement.
    base = bap.BasicAudioAnnouncement(presentation_delay=40000, subgroups=[
        bap.BasicAudioAnnouncement.Subgroup(
            codec_id=hci.CodingFormat(hci.CodecID.LC3),
            codec_specific_configuration=bap.CodecSpecificConfiguration(sampling_frequency=SF.FREQ_48000, frame_duration=FD.DURATION_10000_US,
                                                                        octets_per_codec_frame=100),
            metadata=md_rich,
            bis=[bap.BasicAudioAnnouncement.BIS(1, bap.CodecSpecificConfiguration(audio_channel_allocation=AL.FRONT_LEFT)),
                 bap.BasicAudioAnnouncement.BIS(2, bap.CodecSpecificConfiguration(audio_channel_allocation=AL.FRONT_RIGHT))]),
        bap.BasicAudioAnnouncement.Subgroup(
            codec_id=hci.CodingFormat(hci.CodecID.LC3),
            codec_specific_configuration=bap.CodecSpecificConfiguration(sampling_frequency=SF.FREQ_16000, frame_duration=FD.DURATION_10000_US,
                                                                        octets_per_codec_frame=40),
            metadata=le_audio.Metadata([le_audio.Metadata.Entry(le_audio.Metadata.Tag.LANGUAGE, b'fra')]),
            bis=[bap.BasicAudioAnnouncement.BIS(3, bap.CodecSpecificConfiguration(audio_channel_allocation=AL.FRONT_LEFT | AL.FRONT_RIGHT))]),
    ])
    add_base(bytes(base), 'two subgroups')
    for bid in (0x000001, 0x123456, 0xFFFFFF):
        data = bap.BroadcastAudioAnnouncement(bid).__bytes__()
        add('bap_broadcast_audio_announcement', hex(bid), data, {'broadcast_id': bap.BroadcastAudioAnnouncement.from_bytes(data).broadcast_id})
    ann = bap.UnicastServerAdvertisingData(announcement_type=bap.AnnouncementType.TARGETED,
                                           available_audio_contexts=bap.ContextType.MEDIA | bap.ContextType.CONVERSATIONAL, metadata=b'')
    ad = bytes(ann)
    # AD structure: length, 0x16, UUID 0x184E, then the announcement.
    payload = ad[4:]
    at, ctx, ml = struct.unpack_from('<BIB', payload)
    add('bap_ascs_announcement', 'targeted', payload, {'announcement_type': at, 'available_audio_contexts.sink_contexts': ctx & 0xFFFF,
                                                       'available_audio_contexts.source_contexts': ctx >> 16})

    # BASS: receive states and control point operations (Bumble's from_bytes).
    addr = hci.Address('F0:F1:F2:F3:F4:F5', hci.Address.RANDOM_DEVICE_ADDRESS)
    for enc, bad in ((bass.BroadcastReceiveState.BigEncryption.NOT_ENCRYPTED, b''), (bass.BroadcastReceiveState.BigEncryption.BAD_CODE, bytes(range(16)))):
        st = bass.BroadcastReceiveState(source_id=1, source_address=addr, source_adv_sid=3, broadcast_id=0x123456,
                                        pa_sync_state=bass.BroadcastReceiveState.PeriodicAdvertisingSyncState.SYNCHRONIZED_TO_PA,
                                        big_encryption=enc, bad_code=bad,
                                        subgroups=[bass.SubgroupInfo(0b11, bytes(md_media)), bass.SubgroupInfo(0, b'')])
        add_receive_state(bytes(st), enc.name)
    cps = [bass.RemoteScanStartedOperation(), bass.RemoteScanStoppedOperation(),
           bass.AddSourceOperation(addr, 3, 0x123456, bass.PeriodicAdvertisingSyncParams.SYNCHRONIZE_TO_PA_PAST_NOT_AVAILABLE, 0xFFFF,
                                   [bass.SubgroupInfo(bass.SubgroupInfo.ANY_BIS, bytes(md_media))]),
           bass.ModifySourceOperation(1, bass.PeriodicAdvertisingSyncParams.DO_NOT_SYNCHRONIZE_TO_PA, 0x0100, [bass.SubgroupInfo(0, b'')]),
           bass.SetBroadcastCodeOperation(1, bytes(range(0x10, 0x20))),
           bass.RemoveSourceOperation(1)]
    for op in cps:
        add_bass_operation(bytes(op))

    # HCI: the CIG/CIS/BIG commands and events Bumble's HCI codec knows.
    add_hci_vectors()

    for path, prefix in ((args.capture_values, 'capture_'), (args.broadcast_values, 'broadcast_')):
        if not path:
            continue
        with open(path) as f:
            for v in json.load(f):
                kind = v['kind']
                data = bytes.fromhex(v['hex'])
                what = f"frame {v['frame']}"
                {'ase_operation': lambda: add_ase_operation(data, what, prefix),
                 'ase_state': lambda: add_ase_state(data, what, prefix),
                 'ase_response': lambda: add_cp_notification(data, what, prefix),
                 'pac': lambda: add_pac(data, what, prefix),
                 'hci_command': lambda: add_hci_packet(bytes([1]) + data, what, prefix),
                 'hci_event': lambda: add_hci_packet(bytes([4]) + data, what, prefix),
                 'iso': lambda: add_iso(data, what, prefix),
                 'base': lambda: add_base(data, what, prefix),
                 'broadcast_audio_announcement': lambda: add(prefix + 'bap_broadcast_audio_announcement', what, data,
                                                             {'broadcast_id': bap.BroadcastAudioAnnouncement.from_bytes(data).broadcast_id}),
                 }[kind]()
                vectors[-1]['frame'] = v['frame']
    json.dump({'bumble': __import__('bumble').__version__ if hasattr(__import__('bumble'), '__version__') else 'see requirements.txt',
               'vectors': vectors}, sys.stdout, indent=1)
    sys.stdout.write('\n')


def add_pac(data: bytes, what: str, prefix: str = '') -> None:
    parsed = pacs.PacRecord.list_from_bytes(data)
    expect = {'number_of_pac_records': len(parsed)}
    for i, r in enumerate(parsed):
        p = f'pac_records.{i}.'
        expect.update(coding_format_fields(r.coding_format, p + 'codec_id.'))
        if isinstance(r.codec_specific_capabilities, bytes):
            expect[p + 'codec_specific_capabilities'] = r.codec_specific_capabilities.hex()
        else:
            expect.update(capabilities_fields(r.codec_specific_capabilities, p + 'codec_specific_capabilities.'))
        expect.update(metadata_fields(r.metadata, p + 'metadata.'))
    add(prefix + 'pacs_pac_records', what, data, expect)


def add_ase_operation(data: bytes, what: str, prefix: str = '') -> None:
    op = ascs.ASE_Operation.from_bytes(data)
    expect = {'opcode': int(op.op_code), 'number_of_ases': len(op.ase_id)}
    for i, ase_id in enumerate(op.ase_id):
        p = f'ases.{i}.'
        expect[p + 'ase_id'] = ase_id
        if isinstance(op, ascs.ASE_Config_Codec):
            expect[p + 'target_latency'] = op.target_latency[i]
            expect[p + 'target_phy'] = op.target_phy[i]
            expect.update(coding_format_fields(op.codec_id[i], p + 'codec_id.'))
            expect.update(config_fields(bap.CodecSpecificConfiguration.from_bytes(op.codec_specific_configuration[i]), p + 'codec_specific_configuration.'))
        elif isinstance(op, ascs.ASE_Config_QOS):
            for k in ('cig_id', 'cis_id', 'sdu_interval', 'framing', 'phy', 'max_sdu', 'retransmission_number', 'max_transport_latency', 'presentation_delay'):
                expect[p + k] = getattr(op, k)[i]
        elif isinstance(op, (ascs.ASE_Enable, ascs.ASE_Update_Metadata)):
            expect.update(metadata_fields(le_audio.Metadata.from_bytes(op.metadata[i]), p + 'metadata.'))
    add(prefix + 'ascs_operation', what, data, expect)


def ase_state_examples(cfg: bap.CodecSpecificConfiguration, md: le_audio.Metadata):
    """ASE values from Bumble's AseStateMachine.value in each state."""
    class _Service:  # what AseStateMachine needs of its service
        device = None
    S = ascs.AseStateMachine.State
    out = []
    for state in S:
        m = ascs.AseStateMachine.__new__(ascs.AseStateMachine)
        m.ase_id = 1 + int(state)
        m._state = state
        m.metadata = md
        m.codec_specific_configuration = cfg
        m.supported_presentation_delay_min, m.supported_presentation_delay_max = 20000, 60000
        m.preferred_presentation_delay_min, m.preferred_presentation_delay_max = 30000, 40000
        m.cig_id, m.cis_id, m.sdu_interval, m.framing, m.phy, m.max_sdu = 1, 2, 10000, 0, 2, 40
        m.retransmission_number, m.max_transport_latency, m.presentation_delay = 2, 10, 40000
        out.append((m.value, state.name))
    return out


def add_ase_state(data: bytes, what: str, prefix: str = '') -> None:
    S = ascs.AseStateMachine.State
    state = S(data[1])
    expect = {'ase_id': data[0], 'ase_state': int(state)}
    p = data[2:]
    if state == S.CODEC_CONFIGURED:
        framing, phy, rtn, lat = struct.unpack_from('<BBBH', p)
        d = [int.from_bytes(p[5 + 3 * i: 8 + 3 * i], 'little') for i in range(4)]
        off, coding = hci.CodingFormat.parse_from_bytes(p, 17)
        n = p[off]
        expect.update({'framing': framing, 'preferred_phy': phy, 'preferred_retransmission_number': rtn, 'max_transport_latency': lat,
                       'presentation_delay_min': d[0], 'presentation_delay_max': d[1],
                       'preferred_presentation_delay_min': d[2], 'preferred_presentation_delay_max': d[3]})
        expect.update(coding_format_fields(coding, 'codec_id.'))
        expect.update(config_fields(bap.CodecSpecificConfiguration.from_bytes(p[off + 1: off + 1 + n]), 'codec_specific_configuration.'))
    elif state == S.QOS_CONFIGURED:
        cig, cis = p[0], p[1]
        interval = int.from_bytes(p[2:5], 'little')
        framing, phy, sdu, rtn, lat = struct.unpack_from('<BBHBH', p, 5)
        expect.update({'cig_id': cig, 'cis_id': cis, 'sdu_interval': interval, 'framing': framing, 'phy': phy, 'max_sdu': sdu,
                       'retransmission_number': rtn, 'max_transport_latency': lat, 'presentation_delay': int.from_bytes(p[12:15], 'little')})
    elif state in (S.ENABLING, S.STREAMING, S.DISABLING):
        expect.update({'cig_id': p[0], 'cis_id': p[1]})
        expect.update(metadata_fields(le_audio.Metadata.from_bytes(p[3:3 + p[2]]), 'metadata.'))
    add(prefix + 'ascs_ase_state', what, data, expect)


def add_cp_notification(data: bytes, what: str, prefix: str = '') -> None:
    n = data[1]
    expect = {'opcode': data[0], 'number_of_ases': n}
    for i in range(1 if n == 0xFF else n):
        ase_id, code, reason = data[2 + 3 * i: 5 + 3 * i]
        p = f'responses.{i}.'
        expect.update({p + 'ase_id': ase_id, p + 'response_code': int(ascs.AseResponseCode(code)), p + 'reason': reason})
        if code in range(0x07, 0x0A):
            expect[p + 'reason'] = int(ascs.AseReasonCode(reason))
    add(prefix + 'ascs_cp_notification', what, data, expect)


def add_base(data: bytes, what: str, prefix: str = '') -> None:
    b = bap.BasicAudioAnnouncement.from_bytes(data)
    expect = {'presentation_delay': b.presentation_delay, 'num_subgroups': len(b.subgroups)}
    for i, g in enumerate(b.subgroups):
        p = f'subgroups.{i}.'
        expect[p + 'num_bis'] = len(g.bis)
        expect.update(coding_format_fields(g.codec_id, p + 'codec_id.'))
        expect.update(config_fields(g.codec_specific_configuration, p + 'codec_specific_configuration.'))
        expect.update(metadata_fields(g.metadata, p + 'metadata.'))
        for j, bis in enumerate(g.bis):
            q = f'{p}bis.{j}.'
            expect[q + 'bis_index'] = bis.index
            expect.update(config_fields(bis.codec_specific_configuration, q + 'codec_specific_configuration.'))
    add(prefix + 'bap_base', what, data, expect)


def add_receive_state(data: bytes, what: str) -> None:
    s = bass.BroadcastReceiveState.from_bytes(data)
    expect = {'source_id': s.source_id, 'source_address_type': s.source_address.address_type,
              'source_address': s.source_address.to_string(False).lower(), 'source_adv_sid': s.source_adv_sid,
              'broadcast_id': s.broadcast_id, 'pa_sync_state': int(s.pa_sync_state), 'big_encryption': int(s.big_encryption),
              'num_subgroups': len(s.subgroups)}
    for i, g in enumerate(s.subgroups):
        expect[f'subgroups.{i}.bis_sync'] = g.bis_sync
        expect.update(metadata_fields(le_audio.Metadata.from_bytes(g.metadata), f'subgroups.{i}.metadata.'))
    if s.bad_code:
        expect['bad_code'] = 'hidden'  # a key: bluesift never prints it unless asked
    add('bass_receive_state', what, data, expect)


def add_bass_operation(data: bytes) -> None:
    op = bass.ControlPointOperation.from_bytes(data)
    expect = {'opcode': int(op.op_code)}
    for k in ('source_id', 'advertising_sid', 'broadcast_id', 'pa_interval'):
        if hasattr(op, k):
            expect[k] = getattr(op, k)
    if hasattr(op, 'pa_sync'):
        expect['pa_sync'] = int(op.pa_sync)
    if hasattr(op, 'advertiser_address'):
        expect['advertiser_address_type'] = op.advertiser_address.address_type
        expect['advertiser_address'] = op.advertiser_address.to_string(False).lower()
    if hasattr(op, 'subgroups'):
        expect['num_subgroups'] = len(op.subgroups)
        for i, g in enumerate(op.subgroups):
            expect[f'subgroups.{i}.bis_sync'] = g.bis_sync
    if hasattr(op, 'broadcast_code'):
        expect['broadcast_code'] = 'hidden'
    add('bass_control_point', op.op_code.name, data, expect)


HCI_FIELDS: dict = {}


def flat_hci(obj, names, lists=(), group=''):
    out = {}
    for n in names:
        out[n] = getattr(obj, n)
    for n in lists:
        for i, v in enumerate(getattr(obj, n)):
            out[f'{group}.{i}.{n}' if group else f'{n}.{i}'] = v
    if any(k.startswith('connection_handle.') for k in out) and isinstance(obj, hci.HCI_Event):
        # A list of handles is a list of numbers in bluesift (`connection_handles`).
        for k in [k for k in out if k.startswith('connection_handle.')]:
            out['connection_handles.' + k.split('.')[1]] = out.pop(k)
    for k in ('status', 'reason'):
        if k in out:
            out[k] = int(out[k])
    return out


def add_hci_packet(raw: bytes, what: str, prefix: str = '') -> None:
    """One command or LE Meta event of the capture through Bumble's HCI codec."""
    parsed = hci.HCI_Packet.from_bytes(raw)
    names, lists, group = HCI_FIELDS[type(parsed)]
    expect = flat_hci(parsed, names, lists, group)
    if raw[0] == 1:
        vectors.append({'profile': prefix + 'hci_iso_command', 'what': what, 'opcode': parsed.op_code, 'hex': raw[4:].hex(), 'expect': expect})
    else:
        vectors.append({'profile': prefix + 'hci_iso_event', 'what': what, 'subevent': raw[3], 'hex': raw[4:].hex(), 'expect': expect})


def add_iso(data: bytes, what: str, prefix: str = '') -> None:
    """An HCI ISO Data packet through Bumble's HCI_IsoDataPacket.from_bytes. Its
    Packet_Status_Flag is left out: Bumble 0.0.236 reads bit 15 alone (§5.4.5 has two bits,
    14-15), so it cannot judge that field; LEAudioISOTests checks it from literal bytes."""
    p = hci.HCI_IsoDataPacket.from_bytes(bytes([5]) + data)
    expect = {'handle': p.connection_handle, 'pb_flag': p.pb_flag, 'iso_data_load_length': p.data_total_length,
              'fragment_length': len(p.iso_sdu_fragment)}
    if p.time_stamp is not None:
        expect['time_stamp'] = p.time_stamp
    if p.packet_sequence_number is not None:
        expect['packet_sequence_number'] = p.packet_sequence_number
        expect['iso_sdu_length'] = p.iso_sdu_length
    vectors.append({'profile': prefix + 'hci_iso_data', 'what': what, 'hex': data.hex(), 'expect': expect})


def add_hci_vectors() -> None:
    """Commands and events through Bumble's HCI codec: parameters after the opcode/length
    (commands) or after the subevent code (LE Meta events)."""
    cmds = [
        (hci.HCI_LE_Set_CIG_Parameters_Command(cig_id=1, sdu_interval_c_to_p=10000, sdu_interval_p_to_c=7500, worst_case_sca=1, packing=0, framing=0,
                                               max_transport_latency_c_to_p=10, max_transport_latency_p_to_c=8, cis_id=[1, 2],
                                               max_sdu_c_to_p=[40, 40], max_sdu_p_to_c=[30, 0], phy_c_to_p=[2, 2], phy_p_to_c=[2, 1],
                                               rtn_c_to_p=[2, 2], rtn_p_to_c=[2, 0]),
         ['cig_id', 'sdu_interval_c_to_p', 'sdu_interval_p_to_c', 'worst_case_sca', 'packing', 'framing', 'max_transport_latency_c_to_p',
          'max_transport_latency_p_to_c'], ['cis_id', 'max_sdu_c_to_p', 'max_sdu_p_to_c', 'phy_c_to_p', 'phy_p_to_c', 'rtn_c_to_p', 'rtn_p_to_c'], 'cis'),
        (hci.HCI_LE_Create_CIS_Command(cis_connection_handle=[0x60, 0x61], acl_connection_handle=[0x40, 0x40]), [],
         ['cis_connection_handle', 'acl_connection_handle'], 'cis'),
        (hci.HCI_LE_Remove_CIG_Command(cig_id=1), ['cig_id'], [], ''),
        (hci.HCI_LE_Accept_CIS_Request_Command(connection_handle=0x60), ['connection_handle'], [], ''),
        (hci.HCI_LE_Reject_CIS_Request_Command(connection_handle=0x60, reason=0x0D), ['connection_handle', 'reason'], [], ''),
        (hci.HCI_LE_Create_BIG_Command(big_handle=0, advertising_handle=1, num_bis=2, sdu_interval=10000, max_sdu=100, max_transport_latency=65,
                                       rtn=4, phy=2, packing=0, framing=0, encryption=0, broadcast_code=bytes(16)),
         ['big_handle', 'advertising_handle', 'num_bis', 'sdu_interval', 'max_sdu', 'max_transport_latency', 'rtn', 'phy', 'packing', 'framing',
          'encryption'], [], ''),
        (hci.HCI_LE_Terminate_BIG_Command(big_handle=0, reason=0x16), ['big_handle', 'reason'], [], ''),
        (hci.HCI_LE_BIG_Create_Sync_Command(big_handle=1, sync_handle=0x0001, encryption=0, broadcast_code=bytes(16), mse=0, big_sync_timeout=1000,
                                            bis=[1, 2]), ['big_handle', 'sync_handle', 'encryption', 'mse', 'big_sync_timeout'], ['bis'], ''),
        (hci.HCI_LE_BIG_Terminate_Sync_Command(big_handle=1), ['big_handle'], [], ''),
        (hci.HCI_LE_Remove_ISO_Data_Path_Command(connection_handle=0x60, data_path_direction=1), ['connection_handle', 'data_path_direction'], [], ''),
        (hci.HCI_LE_Read_ISO_TX_Sync_Command(connection_handle=0x60), ['connection_handle'], [], ''),
        (hci.HCI_LE_Periodic_Advertising_Sync_Transfer_Command(connection_handle=0x40, service_data=7, sync_handle=1),
         ['connection_handle', 'service_data', 'sync_handle'], [], ''),
        (hci.HCI_LE_Periodic_Advertising_Set_Info_Transfer_Command(connection_handle=0x40, service_data=7, advertising_handle=1),
         ['connection_handle', 'service_data', 'advertising_handle'], [], ''),
    ]
    for cmd, names, lists, group in cmds:
        HCI_FIELDS[type(cmd)] = (names, lists, group)
        add_hci_packet(bytes(cmd), cmd.name)

    evts = [
        (hci.HCI_LE_CIS_Established_Event(status=0, connection_handle=0x60, cig_sync_delay=1000, cis_sync_delay=900, transport_latency_c_to_p=20000,
                                          transport_latency_p_to_c=15000, phy_c_to_p=2, phy_p_to_c=2, nse=3, bn_c_to_p=1, bn_p_to_c=1, ft_c_to_p=2,
                                          ft_p_to_c=2, max_pdu_c_to_p=40, max_pdu_p_to_c=30, iso_interval=8),
         ['status', 'connection_handle', 'cig_sync_delay', 'cis_sync_delay', 'transport_latency_c_to_p', 'transport_latency_p_to_c', 'phy_c_to_p',
          'phy_p_to_c', 'nse', 'bn_c_to_p', 'bn_p_to_c', 'ft_c_to_p', 'ft_p_to_c', 'max_pdu_c_to_p', 'max_pdu_p_to_c', 'iso_interval'], [], ''),
        (hci.HCI_LE_CIS_Request_Event(acl_connection_handle=0x40, cis_connection_handle=0x60, cig_id=1, cis_id=2),
         ['acl_connection_handle', 'cis_connection_handle', 'cig_id', 'cis_id'], [], ''),
        (hci.HCI_LE_Create_BIG_Complete_Event(status=0, big_handle=0, big_sync_delay=5000, transport_latency_big=20000, phy=2, nse=4, bn=1, pto=0,
                                              irc=4, max_pdu=100, iso_interval=8, connection_handle=[0x70, 0x71]),
         ['status', 'big_handle', 'big_sync_delay', 'transport_latency_big', 'phy', 'nse', 'bn', 'pto', 'irc', 'max_pdu', 'iso_interval'],
         ['connection_handle'], ''),
        (hci.HCI_LE_Terminate_BIG_Complete_Event(big_handle=0, reason=0x16), ['big_handle', 'reason'], [], ''),
        (hci.HCI_LE_BIG_Sync_Established_Event(status=0, big_handle=1, transport_latency_big=20000, nse=4, bn=1, pto=0, irc=4, max_pdu=100,
                                               iso_interval=8, connection_handle=[0x80]),
         ['status', 'big_handle', 'transport_latency_big', 'nse', 'bn', 'pto', 'irc', 'max_pdu', 'iso_interval'], ['connection_handle'], ''),
        (hci.HCI_LE_BIG_Sync_Lost_Event(big_handle=1, reason=0x08), ['big_handle', 'reason'], [], ''),
    ]
    # Known to the capture tables only (the broadcast sink's packets).
    HCI_FIELDS[hci.HCI_LE_Periodic_Advertising_Create_Sync_Command] = (
        ['options', 'advertising_sid', 'advertiser_address_type', 'skip', 'sync_timeout', 'sync_cte_type'], [], '')
    HCI_FIELDS[hci.HCI_LE_Setup_ISO_Data_Path_Command] = (
        ['connection_handle', 'data_path_direction', 'data_path_id', 'controller_delay'], [], '')
    HCI_FIELDS[hci.HCI_LE_Periodic_Advertising_Sync_Established_Event] = (
        ['status', 'sync_handle', 'advertising_sid', 'advertiser_address_type', 'advertiser_phy', 'periodic_advertising_interval',
         'advertiser_clock_accuracy'], [], '')
    HCI_FIELDS[hci.HCI_LE_Periodic_Advertising_Report_Event] = (['sync_handle', 'tx_power', 'rssi', 'cte_type', 'data_status'], [], '')
    HCI_FIELDS[hci.HCI_LE_BIGInfo_Advertising_Report_Event] = (
        ['sync_handle', 'num_bis', 'nse', 'iso_interval', 'bn', 'pto', 'irc', 'max_pdu', 'sdu_interval', 'max_sdu', 'phy', 'framing',
         'encryption'], [], '')
    for ev, names, lists, group in evts:
        HCI_FIELDS[type(ev)] = (names, lists, group)
        add_hci_packet(bytes(ev), ev.name)


if __name__ == '__main__':
    main()
