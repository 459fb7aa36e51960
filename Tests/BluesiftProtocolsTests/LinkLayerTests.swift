import Testing
import BluesiftWire
import BluesiftCapture
@testable import BluesiftProtocols

/// LL packets (access address … CRC) from crackle_le_secure_connections.pcapng (DLT 256,
/// header stripped), tesible_Lv4_passkey.pcapng and sweyntooth DA14680 (tshark btle_raw).
@Suite struct LinkLayerTests {
    func ll(_ hex: String, sniffer: SnifferInfo? = SnifferInfo(hasCRC: true), _ body: (LLPacket) -> Void) {
        withBytes(hex) { body(LLPacket(bytes: $0, sniffer: sniffer)) }
    }

    @Test func advIndCrackleFrame1() {
        ll(
            "d6 be 89 8e 40 21 16 23 42 82 43 7d 02 01 1a 03 03 11 18 13 09 41 6c 65 72 74 20 4e 6f 74 69 66 69 63 61 74 69 6f 6e e5 b9 02",
            sniffer: SnifferInfo(channel: 37, rssi: -55, hasCRC: true)
        ) { p in
            #expect(p.isAdvertising && p.error == nil && p.pduType == 0 && p.txAdd && !p.rxAdd && p.length == 33)
            #expect(p.crc == 0x02B9E5 && p.name == "ADV_IND")
            let a = p.advertising!
            #expect(a.name == "ADV_IND" && a.reports.count == 1 && a.error == nil)
            let r = a.reports[0]
            #expect(r.address?.description == "7d:43:82:42:23:16" && r.addressType == .random && r.rssi == -55)
            #expect(r.localName == "Alert Notification" && Array(r.structures).count == 3)
            #expect(json(p) == #"{"opcode":0,"name":"ADV_IND","access_address":"0x8e89bed6","channel":37,"rssi":-55,"pdu_type":0,"ch_sel":false,"tx_add":true,"rx_add":false,"length":33,"adv_a":"7d:43:82:42:23:16","crc":"0xa79d40"}"#)
            #expect(p.summary == "LL ADV_IND 7d:43:82:42:23:16 name=Alert Notification")
        }
    }

    /// Issue 36: the CRC checked (crackle LE SC #1 with 0x555555, #45 with CONNECT_IND's CRCInit
    /// 0x2ED45D), the CRCInit recovered from a packet and its CRC, one bit flipped noticed, and
    /// the value printed as Wireshark's btle.crc (0xa79d40 for #1).
    @Test func crcCheckedAndCRCInitRecovered() {
        ll("d6 be 89 8e 40 21 16 23 42 82 43 7d 02 01 1a 03 03 11 18 13 09 41 6c 65 72 74 20 4e 6f 74 69 66 69 63 61 74 69 6f 6e e5 b9 02") { p in
            var p = p
            #expect(p.crcOK == nil && p.checkCRC(crcInit: LLCRC.advertisingInit) == true && p.crcOK == true && p.crcComputed)
            #expect(LLCRC.wiresharkOrder(p.crc!) == 0xA79D40)
            #expect(LLCRC.crcInit(of: p.crcCovered!, crc: p.crc!) == 0x55_5555)
        }
        ll("27 4a 65 50 11 00 35 ef 8e") { p in
            var p = p
            #expect(LLCRC.crcInit(of: p.crcCovered!, crc: p.crc!) == 0x2E_D45D)
            #expect(p.checkCRC(crcInit: 0x2E_D45D) == true)
        }
        ll("27 4a 65 50 11 01 35 ef 8e", sniffer: SnifferInfo(crcOK: true, hasCRC: true)) { p in // Length bit flipped
            var p = p
            #expect(p.checkCRC(crcInit: 0x2E_D45D) == false && p.crcOK == true && p.crcValidatedWrongly && !p.crcComputed)
        }
    }

    @Test func scanRequestAndResponseCrackleFrames9And10() {
        ll("d6 be 89 8e c3 0c 0c b2 f0 de f5 14 16 23 42 82 43 7d 0a d5 5a") { p in
            #expect(p.name == "SCAN_REQ" && p.advertising == nil && p.error == nil)
            #expect(json(p).contains(#""scan_a":"14:f5:de:f0:b2:0c","adv_a":"7d:43:82:42:23:16""#))
            #expect(p.summary == "LL SCAN_REQ 14:f5:de:f0:b2:0c → 7d:43:82:42:23:16")
        }
        ll("d6 be 89 8e 44 06 16 23 42 82 43 7d 27 63 df") { p in
            #expect(p.name == "SCAN_RSP" && p.advertising?.reports.first?.data.isEmpty == true)
        }
    }

    @Test func connectIndCrackleFrame44() {
        ll("d6 be 89 8e 85 22 f4 3e 73 70 f3 5c 16 23 42 82 43 7d 27 4a 65 50 5d d4 2e 03 26 00 36 00 00 00 2a 00 ff ff ff ff 1f a5 ec 7c a4") { p in
            #expect(p.name == "CONNECT_IND" && p.rxAdd && !p.txAdd && p.error == nil && p.advertising == nil)
            let c = p.connectInd!
            #expect(c.initA.description == "5c:f3:70:73:3e:f4" && c.advA.description == "7d:43:82:42:23:16")
            #expect(c.accessAddress == 0x5065_4A27 && c.crcInit == 0x2ED45D && c.winSize == 3 && c.winOffset == 38)
            #expect(c.interval == 54 && c.latency == 0 && c.timeout == 42 && c.channelMap == 0x1F_FFFF_FFFF && c.hop == 5 && c.sca == 5)
            #expect(json(p).contains(#""aa":"0x50654a27","crc_init":"0x2ed45d","win_size":3,"win_offset":38,"interval":54,"latency":0,"timeout":42,"channel_map":"0x1fffffffff","hop":5,"sca":5"#))
        }
    }

    @Test func dataChannelCrackleFrames45_48_57() {
        ll("27 4a 65 50 11 00 35 ef 8e") { p in
            #expect(!p.isAdvertising && p.llid == 1 && p.md && !p.sn && p.payload.isEmpty && p.name == "Empty PDU" && p.opcode == 1)
        }
        ll("27 4a 65 50 0b 06 0c 08 0f 00 07 66 6d e7 fb") { p in
            #expect(p.llid == 3 && p.sn && !p.nesn && p.controlOpcode?.name == "LL_VERSION_IND" && p.opcode == 0x0C)
            #expect(json(p).contains(#""version":8,"version_name":"4.2","company_id":15,"#) && json(p).contains(#""subversion":26119"#))
        }
        ll("27 4a 65 50 1a 0b 07 00 06 00 01 03 00 09 10 0d 0f ae 88 ca") { p in // SMP Pairing Request over L2CAP
            #expect(p.llid == 2 && p.name == "L2CAP Start" && Array(p.payload) == Hex.parse("07 00 06 00 01 03 00 09 10 0d 0f")!)
            #expect(p.summary == "LL L2CAP Start len=11")
        }
    }

    @Test func encryptedPayloadIsNotDecodedCrackleFrame167() {
        ll("27 4a 65 50 07 05 71 f0 ff 1e 69 53 12 f9", sniffer: SnifferInfo(encrypted: true, hasCRC: true)) { p in
            #expect(p.encrypted && p.llid == 3 && p.controlOpcode == nil && p.payload.count == 5 && p.name == "Encrypted")
            #expect(json(p).contains(#""length":5,"encrypted":true,"crc":"0x"#))
        }
    }

    @Test func controlProceduresTesibleAndSweyntooth() {
        ll("2c 93 9a af 03 03 16 02 02 89 d1 80") { p in // tesible 2734
            #expect(p.controlOpcode?.name == "LL_PHY_REQ" && json(p).contains(#""tx_phys":2,"rx_phys":2"#))
        }
        ll("2c 93 9a af 03 05 18 02 02 10 00 3a ba 5d") { p in // tesible 2742
            #expect(json(p).contains(#""phy_c_to_p":2,"phy_p_to_c":2,"instant":16"#))
        }
        ll("2c 93 9a af 0f 08 01 ff 05 c0 3f 17 60 00 72 19 74") { p in // tesible 2896
            #expect(p.controlOpcode?.name == "LL_CHANNEL_MAP_IND" && json(p).contains(#""channel_map":"0x173fc005ff","instant":96"#))
        }
        ll("2c 93 9a af 1f 0c 00 03 22 00 24 00 00 00 2a 00 b0 00 50 9d 85") { p in // tesible 3050
            #expect(p.md && json(p).contains(#""win_size":3,"win_offset":34,"interval":36,"latency":0,"timeout":42,"instant":176"#))
        }
        ll("70 83 32 9a 03 09 14 fb 00 48 08 fb 00 48 08 bd 92 67") { p in // sweyntooth DA14680 62
            #expect(p.controlOpcode?.name == "LL_LENGTH_REQ")
            #expect(json(p).contains(#""max_rx_octets":251,"max_rx_time":2120,"max_tx_octets":251,"max_tx_time":2120"#))
        }
        ll("70 83 32 9a 03 02 02 13 00 00 00") { p in
            #expect(json(p).contains(#""error_code":19,"error_name":"Remote User Terminated Connection""#))
        }
        #expect(LLControlOpcode(rawValue: 0x25).name == "LL_POWER_CHANGE_IND")
        #expect(LLControlOpcode(rawValue: 0x71).name == "Unknown")
    }

    @Test func extendedAdvertisingAuxAdvInd() {
        // AUX_ADV_IND on channel 5: ExtHeader len 10, flags AdvA|ADI|TxPower, then Flags + name "Hi".
        ll(
            "d6 be 89 8e 47 12 4a 49 01 02 03 04 05 06 23 30 f8 02 01 06 03 09 48 69 00 00 00",
            sniffer: SnifferInfo(channel: 5, hasCRC: true)
        ) { p in
            #expect(p.name == "AUX_ADV_IND" && p.error == nil)
            let x = p.extendedHeader!
            #expect(x.advMode == 1 && x.advA?.description == "06:05:04:03:02:01" && x.adi == 0x3023 && x.txPower == -8)
            let r = p.advertising!.reports[0]
            #expect(r.sid == 3 && r.txPower == -8 && r.localName == "Hi" && r.addressType == .random)
            #expect(json(p).contains(#""adv_mode":1,"adv_mode_name":"Connectable","adv_a":"06:05:04:03:02:01","did":35,"sid":3,"tx_power":-8"#))
        }
    }

    @Test func truncatedAndOverlongPDUs() {
        ll("d6 be 89 8e 40 21 16 23 42") { p in // header says 33, 3 bytes there (then CRC eats 3)
            #expect(p.error?.code == .truncated && p.error?.layer == "ll" && p.isAdvertising)
        }
        ll("27 4a 65 50 11 00 aa 35 ef 8e") { p in #expect(p.error?.code == .invalidLength && p.payload.isEmpty) }
        ll("27 4a") { p in #expect(p.error?.code == .truncated) }
        ll("27 4a 65 50 11 00", sniffer: SnifferInfo(hasCRC: false)) { p in #expect(p.error == nil && p.crc == nil) }
    }
}
