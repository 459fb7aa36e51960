import Testing
import Foundation

/// Issue 14: `dump --format csv`, columns as documented (README "CSV", `dump --help`).
@Suite struct CSVTests {
    /// RFC 4180 fields of one line (no line breaks inside fields in these rows).
    static func fields(_ line: Substring) -> [String] {
        var out: [String] = [], cur = "", quoted = false, i = line.startIndex
        while i < line.endIndex {
            let c = line[i]
            if quoted {
                if c == "\"" {
                    let n = line.index(after: i)
                    if n < line.endIndex && line[n] == "\"" { cur.append("\""); i = n } else { quoted = false }
                } else {
                    cur.append(c)
                }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                out.append(cur); cur = ""
            } else {
                cur.append(c)
            }
            i = line.index(after: i)
        }
        out.append(cur)
        return out
    }

    @Test func columnsAsDocumented() throws {
        let r = try CLI.run(["dump", "--format", "csv", "--frames", "110-112", CLI.capture("band_mtu23.btsnoop")])
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[0] == "frame,ts,dir,kind,conn,layer,name,handle,service,characteristic,descriptor,value,summary,errors")
        #expect(
            Self.fields(lines[1]) == [
                "110", "2026-11-23T01:04:08.961171Z", "received", "event", "0x0001", "hci",
                "Number of Completed Packets", "", "", "", "", "", "Number of Completed Packets handle=0x0001", ""
            ])
        // A CCCD write: its characteristic, and the descriptor in a column of its own.
        #expect(
            Self.fields(lines[3]) == [
                "112", "2026-11-23T01:04:08.962018Z", "sent", "acl", "0x0001", "att", "Write Request",
                "0x0011", "Battery Service", "Battery Level", "Client Characteristic Configuration", "0100",
                "ATT Write Request handle=0x0011 value=0100 [Battery Service / Battery Level / Client Characteristic Configuration] notifications on", ""
            ])
        // Every row has the header's 14 columns.
        let all = try CLI.run(["dump", "--format", "csv", CLI.capture("band_mtu23.btsnoop")])
        let rows = all.stdout.split(separator: "\n")
        #expect(rows.count == 152)
        #expect(rows.allSatisfy { Self.fields($0).count == 14 })
    }

    @Test func errorsColumnAndQuoting() throws {
        let f = CLI.corpus.appendingPathComponent("sweyntooth_capture_microchip_ATSAMB11_invalid_fragment.pcap").path
        let r = try CLI.run(["dump", "--format", "csv", "--frames", "352", f])
        let row = Self.fields(r.stdout.split(separator: "\n")[1])
        #expect(row[0] == "352")
        #expect(row[5] == "adv" && row[6] == "ADV_IND")
        // Each damage once, though the LL and adv layers both found the AD one.
        #expect(row[13] == "payload: length 23, 17 bytes there; AD structure length 10 runs past the data (4 left)")
        // A field with a comma or a quote is quoted, quotes doubled.
        let q = try CLI.run(["dump", "--format", "csv", "--frames", "136", CLI.capture("band_mtu23.btsnoop")])
        let line = q.stdout.split(separator: "\n")[1]
        #expect(line.contains(",\"ATT Handle Value Notification handle=0x001f"))
        #expect(Self.fields(line).count == 14)
        #expect(Self.fields(line)[12].contains("samples=[{steps=340 heart_rate=100},"))
    }

    /// Issue 26: the layer column is the most specific layer for Classic records too (it said
    /// `l2cap`), from the layer registry (`FrameLayer`).
    @Test func classicRowsNameTheirLayer() throws {
        let r = try CLI.run(["dump", "--format", "csv", "--protocol", "classic", CLI.capture("classic_a2dp_hfp.btsnoop")])
        #expect(r.status == 0)
        let rows = r.stdout.split(separator: "\n").dropFirst().map { Self.fields($0) }
        let byFrame = Dictionary(rows.map { ($0[0], $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byFrame["55"]?[5] == "sdp" && byFrame["55"]?[6] == "Service Search Request")
        #expect(rows.allSatisfy { ["sdp", "rfcomm", "hfp", "avdtp", "avrcp"].contains($0[5]) })
        var layers: [String: Int] = [:]
        for row in rows { layers[row[5], default: 0] += 1 }
        #expect(layers == ["sdp": 8, "rfcomm": 13, "hfp": 33, "avdtp": 28, "avrcp": 15])
        // An AT line's record is `hfp`, named by its command.
        #expect(rows.contains { $0[5] == "hfp" && $0[6] == "AT+CIND" })
        let sdp = try CLI.run(["dump", "--format", "csv", "--protocol", "sdp", CLI.capture("classic_a2dp_hfp.btsnoop")])
        #expect(sdp.stdout.split(separator: "\n").dropFirst().allSatisfy { Self.fields($0)[5] == "sdp" })
    }

    /// Records of a kind no table names show the format's code for it: PacketLogger type
    /// 0xfd (bafang #10), H4 indicator 0x09 (esp32sniffer's ESP32 HCI dump), not a bare
    /// `unknown` (tshark: "Unknown 0x09").
    @Test(.enabled(if: FileManager.default.fileExists(atPath: CLI.corpus.path), "needs ../shared/captures/public"))
    func unknownKindsShowTheirCode() throws {
        let bafang = try CLI.run(["dump", "--format", "csv", "--frames", "10", CLI.corpus.appendingPathComponent("bafang_bluetoothd-hci-latest.pklg").path])
        let row = Self.fields(bafang.stdout.split(separator: "\n")[1])
        #expect(row[3] == "unknown" && row[12] == "unknown (0xfd)", "\(row)")
        let esp = try CLI.run(["dump", "--no-color", "--frames", "1", CLI.corpus.appendingPathComponent("esp32sniffer_ESP32.pcapng").path])
        #expect(esp.stdout == "     1 21:38:05.083182 < unknown (0x09)\n", "\(esp.stdout)")
    }
}
