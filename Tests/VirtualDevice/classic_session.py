# Generates Captures/classic_a2dp_hfp.btsnoop: a phone and a headset (two Bumble hosts on
# one in-process virtual link, BR/EDR) go through SDP, an A2DP source→sink session with
# AVRCP remote control, and an HFP incoming call with an mSBC eSCO link. The phone's HCI is
# written as btsnoop, as Android's snoop log would be.
#   .venv/bin/python Tests/VirtualDevice/classic_session.py OUT.btsnoop
# Everything runs in one process (no TCP ports). Timestamps differ from run to run; the
# bytes of every PDU and the record order do not.
import argparse
import asyncio
import logging
import struct

from bumble import a2dp, avc, avdtp, avrcp, core, hci, hfp, l2cap, rfcomm, sdp
from bumble.controller import Controller, ScoLink
from bumble.core import PhysicalTransport
from bumble.device import Device
from bumble.host import Host
from bumble.link import LocalLink
from bumble.rtp import MediaPacket
from bumble.snoop import BtSnooper
from bumble.transport.common import AsyncPipeSink

PHONE = '00:B1:5F:C1:A5:01'
HEADSET = '00:B1:5F:C1:A5:02'
HF_CHANNEL = 1  # the headset's Handsfree server channel
AG_CHANNEL = 3  # the phone's Audio Gateway server channel (advertised only)
MEDIA_PACKETS = 12
SCO_PACKETS = 8


class ClassicRigController(Controller):
    """The stock controller answers eSCO with zero parameters and air mode µ-law, and drops
    SCO data: fill in what a controller reports for mSBC over eSCO (Core 5.4 Vol 4 Part E
    §7.7.35: transparent air mode, T_eSCO 12 slots, 60-byte packets) and carry SCO data to
    the peer's host. ACL buffers of 1021 bytes as BR/EDR controllers have (the stock 27 is
    LE's), so a media packet is one ACL packet."""

    acl_data_packet_length = 1021
    total_num_acl_data_packets = 8

    def on_hci_read_buffer_size_command(self, _command):
        # Core 5.4 Vol 4 Part E §7.4.5
        return hci.HCI_Read_Buffer_Size_ReturnParameters(
            status=hci.HCI_ErrorCode.SUCCESS,
            hc_acl_data_packet_length=self.acl_data_packet_length,
            hc_synchronous_data_packet_length=60,
            hc_total_num_acl_data_packets=self.total_num_acl_data_packets,
            hc_total_num_synchronous_data_packets=8,
        )

    def on_classic_sco_connection_complete(self, peer_address, status, link_type):
        if status != hci.HCI_ErrorCode.SUCCESS:
            return super().on_classic_sco_connection_complete(peer_address, status, link_type)
        handle = self.allocate_connection_handle()
        self.sco_links[peer_address] = ScoLink(
            handle=handle, link_type=link_type, peer_address=peer_address
        )
        self.send_hci_packet(
            hci.HCI_Synchronous_Connection_Complete_Event(
                status=status,
                connection_handle=handle,
                bd_addr=peer_address,
                link_type=link_type,
                transmission_interval=12,
                retransmission_window=2,
                rx_packet_length=60,
                tx_packet_length=60,
                air_mode=0x03,  # transparent
            )
        )

    def on_hci_packet(self, packet):
        if isinstance(packet, hci.HCI_SynchronousDataPacket):
            link = self.find_classic_sco_link_by_handle(packet.connection_handle)
            peer = self.link.find_classic_controller(link.peer_address) if link else None
            if peer and (back := peer.sco_links.get(self.public_address)):
                peer.send_hci_packet(
                    hci.HCI_SynchronousDataPacket(
                        connection_handle=back.handle,
                        packet_status=packet.packet_status,
                        data_total_length=packet.data_total_length,
                        data=packet.data,
                    )
                )
            return
        super().on_hci_packet(packet)


# A2DP 1.3 §4.3.2 SBC: a syntactically valid frame (header, CRC-8 over the header and scale
# factors, silent samples), so tshark and bluesift see real frame headers.
def sbc_crc8(data: bytes, bits: int) -> int:
    crc = 0x0F
    for i in range(bits):
        bit = (data[i // 8] >> (7 - i % 8)) & 1
        top = (crc >> 7) & 1
        crc = (crc << 1) & 0xFF
        if top ^ bit:
            crc ^= 0x1D
    return crc


def sbc_frame(bitpool: int) -> bytes:
    # 44.1 kHz, 16 blocks, joint stereo, loudness, 8 subbands
    header1 = (0b10 << 6) | (0b11 << 4) | (0b11 << 2) | (0 << 1) | 1
    subbands, blocks, channels = 8, 16, 2
    join_bits = subbands
    scale_bits = 4 * subbands * channels
    crc_input = bytes([header1, bitpool]) + bytes((join_bits + scale_bits + 7) // 8)
    crc = sbc_crc8(crc_input, 16 + join_bits + scale_bits)
    length = 4 + (4 * subbands * channels) // 8 + (join_bits + blocks * bitpool + 7) // 8
    return bytes([0x9C, header1, bitpool, crc]) + bytes(length - 4)


def sink_capabilities_sbc():
    sbc = a2dp.SbcMediaCodecInformation
    return avdtp.MediaCodecCapabilities(
        media_type=avdtp.MediaType.AUDIO,
        media_codec_type=a2dp.CodecType.SBC,
        media_codec_information=sbc(
            sampling_frequency=sbc.SamplingFrequency.SF_48000 | sbc.SamplingFrequency.SF_44100,
            channel_mode=sbc.ChannelMode.MONO
            | sbc.ChannelMode.DUAL_CHANNEL
            | sbc.ChannelMode.STEREO
            | sbc.ChannelMode.JOINT_STEREO,
            block_length=sbc.BlockLength.BL_4
            | sbc.BlockLength.BL_8
            | sbc.BlockLength.BL_12
            | sbc.BlockLength.BL_16,
            subbands=sbc.Subbands.S_4 | sbc.Subbands.S_8,
            allocation_method=sbc.AllocationMethod.LOUDNESS | sbc.AllocationMethod.SNR,
            minimum_bitpool_value=2,
            maximum_bitpool_value=53,
        ),
    )


def sink_capabilities_aac():
    aac = a2dp.AacMediaCodecInformation
    return avdtp.MediaCodecCapabilities(
        media_type=avdtp.MediaType.AUDIO,
        media_codec_type=a2dp.CodecType.MPEG_2_4_AAC,
        media_codec_information=aac(
            object_type=aac.ObjectType.MPEG_2_AAC_LC,
            sampling_frequency=aac.SamplingFrequency.SF_44100 | aac.SamplingFrequency.SF_48000,
            channels=aac.Channels.MONO | aac.Channels.STEREO,
            vbr=1,
            bitrate=320000,
        ),
    )


def source_configuration_sbc(bitpool: int):
    sbc = a2dp.SbcMediaCodecInformation
    return avdtp.MediaCodecCapabilities(
        media_type=avdtp.MediaType.AUDIO,
        media_codec_type=a2dp.CodecType.SBC,
        media_codec_information=sbc(
            sampling_frequency=sbc.SamplingFrequency.SF_44100,
            channel_mode=sbc.ChannelMode.JOINT_STEREO,
            block_length=sbc.BlockLength.BL_16,
            subbands=sbc.Subbands.S_8,
            allocation_method=sbc.AllocationMethod.LOUDNESS,
            minimum_bitpool_value=2,
            maximum_bitpool_value=bitpool,
        ),
    )


def hf_configuration():
    return hfp.HfConfiguration(
        supported_hf_features=[
            hfp.HfFeature.CODEC_NEGOTIATION,
            hfp.HfFeature.ESCO_S4_SETTINGS_SUPPORTED,
            hfp.HfFeature.ENHANCED_CALL_STATUS,
            hfp.HfFeature.THREE_WAY_CALLING,
            hfp.HfFeature.CLI_PRESENTATION_CAPABILITY,
            hfp.HfFeature.REMOTE_VOLUME_CONTROL,
        ],
        supported_hf_indicators=[],
        supported_audio_codecs=[hfp.AudioCodec.CVSD, hfp.AudioCodec.MSBC],
    )


def ag_configuration():
    return hfp.AgConfiguration(
        supported_ag_features=[
            hfp.AgFeature.IN_BAND_RING_TONE_CAPABILITY,
            hfp.AgFeature.REJECT_CALL,
            hfp.AgFeature.CODEC_NEGOTIATION,
            hfp.AgFeature.ESCO_S4_SETTINGS_SUPPORTED,
            hfp.AgFeature.ENHANCED_CALL_STATUS,
            hfp.AgFeature.THREE_WAY_CALLING,
        ],
        supported_ag_indicators=[
            hfp.AgIndicatorState.service(),
            hfp.AgIndicatorState.call(),
            hfp.AgIndicatorState.callsetup(),
            hfp.AgIndicatorState.callheld(),
            hfp.AgIndicatorState.signal(),
            hfp.AgIndicatorState.roam(),
            hfp.AgIndicatorState.battchg(),
        ],
        supported_hf_indicators=[],
        supported_ag_call_hold_operations=[
            hfp.CallHoldOperation.RELEASE_ALL_HELD_CALLS,
            hfp.CallHoldOperation.RELEASE_ALL_ACTIVE_CALLS,
            hfp.CallHoldOperation.HOLD_ALL_ACTIVE_CALLS,
            hfp.CallHoldOperation.ADD_HELD_CALL,
        ],
        supported_audio_codecs=[hfp.AudioCodec.CVSD, hfp.AudioCodec.MSBC],
    )


class PhoneAvrcp(avrcp.Protocol):
    """Bumble's target answers GetElementAttributes with "invalid parameter": answer it
    with the playing track (AVRCP 1.6 §6.6.1)."""

    TRACK = {
        avrcp.MediaAttributeId.TITLE: 'Sifting Blue',
        avrcp.MediaAttributeId.ARTIST_NAME: 'The Snoop Logs',
        avrcp.MediaAttributeId.ALBUM_NAME: 'BR/EDR',
    }

    def _on_command_pdu(self, pdu_id, pdu):
        if pdu_id == avrcp.PduId.GET_ELEMENT_ATTRIBUTES:
            command = avrcp.Command.from_bytes(pdu_id, pdu)
            label = self.receive_command_state.transaction_label
            attributes = [
                avrcp.MediaAttribute(attribute_id, avrcp.CharacterSetId.UTF_8, value)
                for attribute_id, value in self.TRACK.items()
                if attribute_id in command.attribute_ids
            ]
            self.send_avrcp_response(
                label,
                avc.ResponseFrame.ResponseCode.IMPLEMENTED_OR_STABLE,
                avrcp.GetElementAttributesResponse(attributes),
            )
            self.receive_command_state = None
            return
        super()._on_command_pdu(pdu_id, pdu)


async def settle(seconds=0.05):
    await asyncio.sleep(seconds)


async def run(out_path: str) -> None:
    link = LocalLink()
    controllers = [
        ClassicRigController('phone', link=link, public_address=PHONE),
        ClassicRigController('headset', link=link, public_address=HEADSET),
    ]
    phone, headset = [
        Device(address=hci.Address(address), host=Host(c, AsyncPipeSink(c)))
        for address, c in zip((PHONE, HEADSET), controllers)
    ]
    phone.name, headset.name = 'bluesift-phone', 'bluesift-headset'
    for device in (phone, headset):
        device.classic_enabled = True

    out = open(out_path, 'wb')
    phone.host.snooper = BtSnooper(out)

    # SDP records. Headset: A2DP sink, HFP hands-free on channel 1, AVRCP controller.
    headset.sdp_service_records = {
        0x00010001: a2dp.make_audio_sink_service_sdp_records(0x00010001),
        0x00010002: hfp.make_hf_sdp_records(0x00010002, HF_CHANNEL, hf_configuration()),
        0x00010003: avrcp.ControllerServiceSdpRecord(0x00010003).to_service_attributes(),
    }
    phone.sdp_service_records = {
        0x00010001: a2dp.make_audio_source_service_sdp_records(0x00010001),
        0x00010002: hfp.make_ag_sdp_records(0x00010002, AG_CHANNEL, ag_configuration()),
        0x00010003: avrcp.TargetServiceSdpRecord(0x00010003).to_service_attributes(),
    }

    # Headset side: AVDTP sinks (AAC first, then SBC), AVRCP controller, RFCOMM server.
    sinks = []

    def on_avdtp_connection(server):
        sinks.append(server.add_sink(sink_capabilities_aac()))
        sinks.append(server.add_sink(sink_capabilities_sbc()))

    avdtp.Listener.for_device(headset).on('connection', on_avdtp_connection)
    headset_avrcp = avrcp.Protocol(avrcp.Delegate())
    headset_avrcp.listen(headset)
    phone_delegate = avrcp.Delegate(
        supported_events=[avrcp.EventId.PLAYBACK_STATUS_CHANGED, avrcp.EventId.TRACK_CHANGED]
    )
    phone_avrcp = PhoneAvrcp(phone_delegate)
    phone_avrcp.listen(phone)
    hf_dlc_future = asyncio.get_running_loop().create_future()
    rfcomm.Server(headset).listen(hf_dlc_future.set_result, HF_CHANNEL)

    await phone.power_on()
    await headset.power_on()
    await headset.set_discoverable(True)
    await headset.set_connectable(True)

    # ACL: the phone connects to the headset.
    phone_conn, headset_conn = await asyncio.gather(
        phone.connect(headset.public_address, transport=PhysicalTransport.BR_EDR),
        headset.accept(phone.public_address),
    )
    await settle()

    # SDP: what does the headset offer? (Service Discovery Protocol, Core 5.4 Vol 3 Part B)
    async with sdp.Client(phone_conn) as client:
        await client.search_services([core.BT_AUDIO_SINK_SERVICE])
        await client.search_attributes([core.BT_AUDIO_SINK_SERVICE], [(0x0000, 0xFFFF)])
        await client.search_attributes([core.BT_HANDSFREE_SERVICE], [(0x0000, 0xFFFF)])
    async with sdp.Client(headset_conn) as client:
        await client.search_attributes(
            [core.BT_AV_REMOTE_CONTROL_TARGET_SERVICE], [(0x0000, 0xFFFF)]
        )
    await settle()

    # A2DP: discover, capabilities, configure SBC, open (AVDTP 1.3 §8).
    async def media_packets():
        frame = sbc_frame(53)
        frames_per_packet = 5
        for seq in range(MEDIA_PACKETS):
            payload = bytes([frames_per_packet]) + frame * frames_per_packet
            packet = MediaPacket(2, 0, 0, 0, seq, seq * 128 * frames_per_packet, 0x1A2B3C4D, [], 96, payload)
            packet.timestamp_seconds = seq * 128 * frames_per_packet / 44100
            yield packet

    pump = avdtp.MediaPacketPump(media_packets())
    client = await avdtp.Protocol.connect(phone_conn)
    endpoints = await client.discover_remote_endpoints()
    source = client.add_source(source_configuration_sbc(53), pump)
    remote_sbc = client.find_remote_sink_by_codec(avdtp.MediaType.AUDIO, a2dp.CodecType.SBC)
    assert remote_sbc is not None, [e.seid for e in endpoints]
    stream = await client.create_stream(source, remote_sbc)
    await stream.open()
    await settle()

    # AVRCP: the headset connects, asks what the phone can notify, registers for playback
    # status, presses play (AVRCP 1.6 §4.6, §6.7, §11.1.2).
    await headset_avrcp.connect(headset_conn)
    await settle()
    await headset_avrcp.get_supported_events()
    playback = headset_avrcp.monitor_playback_status()
    first = asyncio.ensure_future(playback.__anext__())
    await first  # INTERIM: stopped
    changed = asyncio.ensure_future(playback.__anext__())
    await headset_avrcp.send_key_event(avc.PassThroughFrame.OperationId.PLAY, True)
    await headset_avrcp.send_key_event(avc.PassThroughFrame.OperationId.PLAY, False)

    # The phone starts streaming and says so.
    await stream.start()
    phone_delegate.playback_status = avrcp.PlayStatus.PLAYING
    phone_avrcp.notify_playback_status_changed(avrcp.PlayStatus.PLAYING)
    await changed
    await headset_avrcp.get_element_attributes(
        0,
        [
            avrcp.MediaAttributeId.TITLE,
            avrcp.MediaAttributeId.ARTIST_NAME,
            avrcp.MediaAttributeId.ALBUM_NAME,
        ],
    )
    await pump.wait_for_completion()
    await settle()

    # Pause from the headset: the phone suspends the stream.
    await headset_avrcp.send_key_event(avc.PassThroughFrame.OperationId.PAUSE, True)
    await headset_avrcp.send_key_event(avc.PassThroughFrame.OperationId.PAUSE, False)
    await stream.stop()
    await settle()

    # HFP: the phone opens RFCOMM to the headset's Handsfree channel; the headset brings up
    # the service level connection (HFP 1.8 §4.2: BRSF, BAC, CIND, CMER, CHLD).
    mux = await rfcomm.Client(phone_conn).start()
    ag_dlc = await mux.open_dlc(HF_CHANNEL)
    hf_dlc = await hf_dlc_future
    ag = hfp.AgProtocol(ag_dlc, ag_configuration())
    hf = hfp.HfProtocol(hf_dlc, hf_configuration())
    await hf.initiate_slc()
    hf_task = asyncio.create_task(hf.run())
    await hf.execute_command('AT+CLIP=1')
    await hf.execute_command('AT+VGS=9')
    await settle()

    # Incoming call: callsetup=1, RING with caller id, the headset answers (HFP 1.8 §4.13).
    ag.update_ag_indicator(hfp.AgIndicator.CALL_SETUP, 1)
    answered = asyncio.get_running_loop().create_future()
    ag.once('answer', lambda: answered.set_result(None))
    ag.send_ring()
    # HFP 1.8 §4.23: the number is a quoted string (Bumble's helper leaves the quotes out)
    ag.send_response('+CLIP: "+15551230199",145')
    await settle()
    await hf.answer_incoming_call()
    await answered
    ag.update_ag_indicator(hfp.AgIndicator.CALL, 1)
    ag.update_ag_indicator(hfp.AgIndicator.CALL_SETUP, 0)

    # Codec connection (HFP 1.8 §4.11.3): +BCS:2 / AT+BCS=2, then an mSBC eSCO link.
    await ag.negotiate_codec(hfp.AudioCodec.MSBC)

    def on_sco_request(_connection, _link_type):
        asyncio.ensure_future(
            headset.send_command(
                hci.HCI_Enhanced_Accept_Synchronous_Connection_Request_Command(
                    bd_addr=phone.public_address,
                    **hfp.ESCO_PARAMETERS[hfp.DefaultCodecParameters.ESCO_MSBC_T2].asdict(),
                )
            )
        )

    headset.on('sco_request', on_sco_request)
    sco_up = [asyncio.get_running_loop().create_future() for _ in range(2)]
    phone.once('sco_connection', sco_up[0].set_result)
    headset.once('sco_connection', sco_up[1].set_result)
    await phone.send_command(
        hci.HCI_Enhanced_Setup_Synchronous_Connection_Command(
            connection_handle=phone_conn.handle,
            **hfp.ESCO_PARAMETERS[hfp.DefaultCodecParameters.ESCO_MSBC_T2].asdict(),
        )
    )
    phone_sco, headset_sco = await asyncio.gather(*sco_up)
    # mSBC frames (HFP 1.8 §5.7.4): H2 header 01 x8, sync 0xAD, then silence; 60 bytes.
    for i in range(SCO_PACKETS):
        h2 = bytes([0x01, (0x08, 0x38, 0xC8, 0xF8)[i % 4]])
        frame = h2 + bytes([0xAD, 0x00, 0x00]) + bytes(55)
        phone.host.send_sco_sdu(phone_sco.handle, frame)
        headset.host.send_sco_sdu(headset_sco.handle, frame)
        await asyncio.sleep(0.0075)
    await settle()

    # The headset hangs up (HFP 1.8 §4.15.1): AT+CHUP, OK, +CIEV call=0, eSCO down.
    hung_up = asyncio.get_running_loop().create_future()
    ag.once('hang_up', lambda: hung_up.set_result(None))
    await hf.terminate_call()
    await hung_up
    ag.update_ag_indicator(hfp.AgIndicator.CALL, 0)
    await settle()
    await phone_sco.disconnect()
    await settle()

    # Music ends: close the stream, drop RFCOMM and the link.
    await stream.close()
    await settle()
    hf.unsolicited_queue.put_nowait(None)
    await hf_task
    await mux.disconnect()
    await settle()
    await phone_conn.disconnect()
    await settle(0.2)
    out.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument('out')
    parser.add_argument('--log-level', default='WARNING')
    parser.add_argument("--timeout", type=float, default=60)
    args = parser.parse_args()
    logging.basicConfig(level=args.log_level)
    asyncio.run(asyncio.wait_for(run(args.out), args.timeout))


if __name__ == '__main__':
    main()
