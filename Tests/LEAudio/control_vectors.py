#!/usr/bin/env python3
"""Oracle vectors for the LE Audio control profiles bluesift decodes from one table
(Sources/BluesiftProtocols/LEAudio/Profiles/ControlProfiles.swift): values built with Google
Bumble's own classes and enums and parsed back with its parsers where it has them
(`VolumeState.from_bytes`, `VolumeOffsetState.from_bytes`, `VocsAudioLocation.from_bytes`,
`AudioOutputDescription.from_bytes`, `AudioInputState.from_bytes`,
`GainSettingsProperties.from_bytes`, `HearingAidFeatures_from_bytes`), else split the way its
servers and clients read them (`VolumeControlService._on_write_volume_control_point`,
`VolumeOffsetControlPoint.on_write`, `AudioInputControlPoint.on_write`,
`MediaControlServiceProxy` callbacks, `HearingAccessService` preset operations) with its
enums naming the values. Bumble has no TBS: TBS is checked from literal bytes in Swift.

    .venv/bin/python Tests/LEAudio/control_vectors.py > Tests/LEAudio/control_vectors.json

Each vector: characteristic UUID, whether written, the bytes, and Bumble's values under
bluesift's JSON keys; `*_name(s)` values are Bumble's enum names (compared case- and
punctuation-blind).
"""
from __future__ import annotations

import json
import struct

import bumble
from bumble.profiles import aics, csip, gmap, hap, mcp, tmap, vcs, vocs
from bumble.profiles.bap import AudioLocation

vectors: list[dict] = []


def add(profile: str, uuid: int, written: bool, data: bytes, expect: dict) -> None:
    vectors.append({'profile': profile, 'uuid': uuid, 'written': written, 'hex': data.hex(), 'expect': expect})


def flag_names(flag) -> dict:
    return {i: m.name for i, m in enumerate(m for m in type(flag) if m & flag)}


def names(prefix: str, flag) -> dict:
    return {f'{prefix}_names.{i}': n for i, n in flag_names(flag).items()}


# VCS 1.0
for v, m, c in [(0, 0, 0), (120, 1, 7), (255, 0, 255)]:
    data = bytes(vcs.VolumeState(v, m, c))
    s = vcs.VolumeState.from_bytes(data)
    add('vcs', 0x2B7D, False, data, {'volume_setting': s.volume_setting, 'mute': s.mute, 'change_counter': s.change_counter})
for op in vcs.VolumeControlPointOpcode:
    data = bytes([op, 9]) + (bytes([200]) if op == vcs.VolumeControlPointOpcode.SET_ABSOLUTE_VOLUME else b'')
    # As VolumeControlService._on_write_volume_control_point reads it.
    e = {'opcode': int(vcs.VolumeControlPointOpcode(data[0])), 'opcode_name': vcs.VolumeControlPointOpcode(data[0]).name, 'change_counter': data[1]}
    if len(data) > 2:
        e['volume_setting'] = data[2]
    add('vcs', 0x2B7E, True, data, e)
flags = vcs.VolumeFlags.VOLUME_SETTING_PERSISTED
add('vcs', 0x2B7F, False, bytes([flags]), {'volume_flags': int(flags), **names('volume_flags', flags)})

# VOCS 1.0
for off, c in [(0, 0), (-255, 3), (255, 200), (-1, 1)]:
    data = bytes(vocs.VolumeOffsetState(off, c))
    s = vocs.VolumeOffsetState.from_bytes(data)
    add('vocs', 0x2B80, False, data, {'volume_offset': s.volume_offset, 'change_counter': s.change_counter})
for loc in [AudioLocation.FRONT_LEFT, AudioLocation.FRONT_LEFT | AudioLocation.FRONT_RIGHT, AudioLocation.LOW_FREQUENCY_EFFECTS_1 | AudioLocation.BACK_CENTER]:
    data = bytes(vocs.VocsAudioLocation(loc))
    s = vocs.VocsAudioLocation.from_bytes(data)
    add('vocs', 0x2B81, False, data, {'audio_location': int(s.audio_location)})
for cc, off in [(4, -100), (0, 255)]:
    data = bytes([vocs.SetVolumeOffsetOpCode.SET_VOLUME_OFFSET]) + struct.pack('<Bh', cc, off)
    change_counter, volume_offset = struct.unpack('<Bh', data[1:])  # VolumeOffsetControlPoint.on_write
    add('vocs', 0x2B82, True, data, {'opcode': data[0], 'opcode_name': vocs.SetVolumeOffsetOpCode(data[0]).name, 'change_counter': change_counter, 'volume_offset': volume_offset})
data = bytes(vocs.AudioOutputDescription('Living room speaker'))
add('vocs', 0x2B83, False, data, {'audio_output_description': vocs.AudioOutputDescription.from_bytes(data).audio_output_description})

# AICS 1.0
for g, m, mode, c in [(-128, aics.Mute.NOT_MUTED, aics.GainMode.MANUAL, 0), (12, aics.Mute.MUTED, aics.GainMode.AUTOMATIC_ONLY, 77), (127, aics.Mute.DISABLED, aics.GainMode.MANUAL_ONLY, 255)]:
    data = bytes(aics.AudioInputState(g, m, mode, c))
    s = aics.AudioInputState.from_bytes(data)
    add('aics', 0x2B77, False, data, {'gain_setting': s.gain_settings, 'mute': int(s.mute), 'mute_name': aics.Mute(s.mute).name,
                                      'gain_mode': int(s.gain_mode), 'gain_mode_name': aics.GainMode(s.gain_mode).name, 'change_counter': s.change_counter})
for p in [aics.GainSettingsProperties(), aics.GainSettingsProperties(5, -40, 20)]:
    data = bytes(p)
    s = aics.GainSettingsProperties.from_bytes(data)
    add('aics', 0x2B78, False, data, {'gain_setting_units': s.gain_settings_unit, 'gain_setting_minimum': s.gain_settings_minimum, 'gain_setting_maximum': s.gain_settings_maximum})
for st in aics.AudioInputStatus:
    add('aics', 0x2B7A, False, bytes([st]), {'audio_input_status': int(st), 'audio_input_status_name': st.name})
for op in aics.AudioInputControlPointOpCode:
    data = bytes([op, 3]) + (struct.pack('b', -20) if op == aics.AudioInputControlPointOpCode.SET_GAIN_SETTING else b'')
    # As AudioInputControlPoint.on_write reads it.
    e = {'opcode': int(aics.AudioInputControlPointOpCode(data[0])), 'opcode_name': aics.AudioInputControlPointOpCode(data[0]).name, 'change_counter': data[1]}
    if op == aics.AudioInputControlPointOpCode.SET_GAIN_SETTING:
        e['gain_setting'] = struct.unpack_from('b', data, 2)[0]
    add('aics', 0x2B7B, True, data, e)
add('aics', 0x2B7C, False, 'Bluetooth'.encode(), {'audio_input_description': aics.AudioInputDescription().audio_input_description})

# CSIS 1.0 Set Member Lock
for lock in csip.MemberLock:
    add('csis', 0x2B86, False, bytes([lock]), {'set_member_lock': int(lock), 'set_member_lock_name': lock.name})

# MCS 1.0
add('mcs', 0x2B93, False, 'Bumble Player'.encode(), {'media_player_name': 'Bumble Player'})
for st in mcp.MediaState:
    add('mcs', 0x2BA3, False, bytes([st]), {'media_state': int(st), 'media_state_name': st.name})
for po in mcp.PlayingOrder:
    add('mcs', 0x2BA1, False, bytes([po]), {'playing_order': int(po), 'playing_order_name': po.name})
sup = mcp.PlayingOrderSupported.SINGLE_ONCE | mcp.PlayingOrderSupported.IN_ORDER_REPEAT | mcp.PlayingOrderSupported.SHUFFLE_REPEAT
add('mcs', 0x2BA2, False, struct.pack('<H', sup), {'playing_orders_supported': int(sup), **names('playing_orders_supported', sup)})
ops = mcp.MediaControlPointOpcodeSupported.PLAY | mcp.MediaControlPointOpcodeSupported.PAUSE | mcp.MediaControlPointOpcodeSupported.GOTO_TRACK | mcp.MediaControlPointOpcodeSupported.GOTO_GROUP
add('mcs', 0x2BA5, False, struct.pack('<I', ops), {'opcodes_supported': int(ops), **names('opcodes_supported', ops)})
for op in mcp.MediaControlPointOpcode:
    operand = struct.pack('<i', -1500) if op in (mcp.MediaControlPointOpcode.MOVE_RELATIVE, mcp.MediaControlPointOpcode.GOTO_SEGMENT,
                                                  mcp.MediaControlPointOpcode.GOTO_TRACK, mcp.MediaControlPointOpcode.GOTO_GROUP) else b''
    data = bytes([op]) + operand
    e = {'opcode': int(op), 'opcode_name': op.name}
    if operand:
        e['offset_centiseconds' if op == mcp.MediaControlPointOpcode.MOVE_RELATIVE else 'n'] = struct.unpack('<i', operand)[0]
    add('mcs', 0x2BA4, True, data, e)
    # The notification MediaControlServiceProxy.write_control_point waits for: opcode, result.
    note = bytes([op, mcp.MediaControlPointResultCode.SUCCESS])
    add('mcs', 0x2BA4, False, note, {'requested_opcode': int(op), 'requested_opcode_name': op.name,
                                     'result_code': int(mcp.MediaControlPointResultCode(note[1])), 'result_code_name': mcp.MediaControlPointResultCode(note[1]).name})
for cs in [0, 6000, -1]:
    data = struct.pack('<i', cs)
    add('mcs', 0x2B98, False, data, {'track_duration_centiseconds': struct.unpack_from('<i', data)[0]})  # as _on_track_duration
    add('mcs', 0x2B99, False, data, {'track_position_centiseconds': struct.unpack_from('<i', data)[0]})  # as _on_track_position
oid = mcp.ObjectId(0x0000_1234_5678)
add('mcs', 0x2B9D, False, bytes(oid), {'items.0.object_id': int(mcp.ObjectId.create_from_bytes(bytes(oid)))})

# HAS 1.0
for t, sync, ind, dyn, wr in [(hap.HearingAidType.BINAURAL_HEARING_AID, 1, 0, 1, 1), (hap.HearingAidType.MONAURAL_HEARING_AID, 0, 1, 0, 0), (hap.HearingAidType.BANDED_HEARING_AID, 0, 0, 0, 1)]:
    f = hap.HearingAidFeatures(t, hap.PresetSynchronizationSupport(sync), hap.IndependentPresets(ind), hap.DynamicPresets(dyn), hap.WritablePresetsSupport(wr))
    data = bytes(f)
    g = hap.HearingAidFeatures_from_bytes(data[0])
    e = {'hearing_aid_features': data[0], 'hearing_aid_type': int(g.hearing_aid_type)}
    bits = [('Preset Synchronization Support', g.preset_synchronization_support), ('Independent Presets', g.independent_presets),
            ('Dynamic Presets', g.dynamic_presets), ('Writable Presets Support', g.writable_presets_support)]
    for i, n in enumerate(n for n, on in bits if on):
        e[f'hearing_aid_features_names.{i}'] = n
    add('has', 0x2BDA, False, data, e)
rec = hap.PresetRecord(3, 'Restaurant', hap.PresetRecord.Property(hap.PresetRecord.Property.Writable.CAN_BE_WRITTEN, hap.PresetRecord.Property.IsAvailable.IS_AVAILABLE))
O = hap.HearingAidPresetControlPointOpcode
# Read Preset Response as HearingAccessService writes it: opcode, Is_Last, preset record.
data = bytes([O.READ_PRESET_RESPONSE, 1]) + bytes(rec)
add('has', 0x2BDB, False, data, {'opcode': int(O.READ_PRESET_RESPONSE), 'opcode_name': O.READ_PRESET_RESPONSE.name, 'is_last': 1, 'index': rec.index,
                                  'properties': bytes(rec.properties)[0], 'name': rec.name})
data = hap.PresetChangedOperation(hap.PresetChangedOperation.ChangeId.GENERIC_UPDATE, hap.PresetChangedOperation.Generic(2, rec)).to_bytes(False)
add('has', 0x2BDB, False, data, {'opcode': int(O.PRESET_CHANGED), 'change_id': 0, 'change_id_name': 'GENERIC_UPDATE', 'is_last': 0, 'prev_index': 2,
                                  'index': rec.index, 'properties': bytes(rec.properties)[0], 'name': rec.name})
for op in [hap.PresetChangedOperationDeleted(5), hap.PresetChangedOperationAvailable(6), hap.PresetChangedOperationUnavailable(7)]:
    data = op.to_bytes(True)
    add('has', 0x2BDB, False, data, {'opcode': int(O.PRESET_CHANGED), 'change_id': int(op.change_id), 'change_id_name': op.change_id.name, 'is_last': 1,
                                      'index': op.additional_parameters})
add('has', 0x2BDB, True, bytes([O.READ_PRESETS_REQUEST, 1, 0xFF]), {'opcode': int(O.READ_PRESETS_REQUEST), 'opcode_name': O.READ_PRESETS_REQUEST.name, 'start_index': 1, 'num_presets': 255})
add('has', 0x2BDB, True, bytes([O.WRITE_PRESET_NAME, 3]) + 'Quiet'.encode(), {'opcode': int(O.WRITE_PRESET_NAME), 'index': 3, 'name': 'Quiet'})
for op in [O.SET_ACTIVE_PRESET, O.SET_ACTIVE_PRESET_SYNCHRONIZED_LOCALLY]:
    add('has', 0x2BDB, True, bytes([op, 4]), {'opcode': int(op), 'opcode_name': op.name, 'index': 4})
for op in [O.SET_NEXT_PRESET, O.SET_PREVIOUS_PRESET, O.SET_NEXT_PRESET_SYNCHRONIZED_LOCALLY, O.SET_PREVIOUS_PRESET_SYNCHRONIZED_LOCALLY]:
    add('has', 0x2BDB, True, bytes([op]), {'opcode': int(op), 'opcode_name': op.name})

# TMAP 1.0 / GMAP 1.0
for role in [tmap.Role.CALL_GATEWAY | tmap.Role.UNICAST_MEDIA_SENDER, tmap.Role.CALL_TERMINAL | tmap.Role.UNICAST_MEDIA_RECEIVER | tmap.Role.BROADCAST_MEDIA_RECEIVER]:
    data = struct.pack('<H', int(role))  # as TelephonyAndMediaAudioService stores it
    add('tmas', 0x2B51, False, data, {'tmap_role': int(role), **names('tmap_role', role)})
for uuid, key, flag in [(0x2C00, 'gmap_role', gmap.GmapRole.UNICAST_GAME_TERMINAL | gmap.GmapRole.BROADCAST_GAME_RECEIVER),
                        (0x2C01, 'ugg_features', gmap.UggFeatures.UGG_MULTIPLEX | gmap.UggFeatures.UGG_96_KBPS_SOURCE),
                        (0x2C02, 'ugt_features', gmap.UgtFeatures.UGT_SOURCE | gmap.UgtFeatures.UGT_80_KBPS_SOURCE | gmap.UgtFeatures.UGT_MULTISOURCE),
                        (0x2C03, 'bgs_features', gmap.BgsFeatures.BGS_96_KBPS), (0x2C04, 'bgr_features', gmap.BgrFeatures.BGR_MULTISINK | gmap.BgrFeatures.BGR_MULTIPLEX)]:
    add('gmas', uuid, False, bytes([int(flag)]), {key: int(flag), **names(key, flag)})

print(json.dumps({'bumble': bumble.__version__ if hasattr(bumble, '__version__') else 'unknown', 'vectors': vectors}, indent=1))
