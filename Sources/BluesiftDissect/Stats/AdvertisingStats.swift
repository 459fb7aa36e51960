import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of advertising reports: devices, names, companies, RSSI.
extension CaptureStats {
    // MARK: advertising

    func advertising(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64) {
        a.decoded.advStorage.forEachReport { rep in
            guard let addr = rep.address else { return }
            report.counts.advertisingReports += 1
            let i: Int
            if let d = deviceIndex[addr] {
                i = d
            } else {
                guard report.devices.count < StatsLimits.devices else { report.devicesNotListed += 1; return }
                i = report.devices.count
                deviceIndex[addr] = i
                report.devices.append(
                    .init(
                        address: addr.description, addressType: rep.addressType?.name,
                        firstFrame: r.frame, lastFrame: r.frame, firstUs: us, lastUs: us))
            }
            report.devices[i].advertisingReports += 1
            report.devices[i].lastFrame = r.frame; report.devices[i].lastUs = us
            if let rssi = rep.rssi, rssi != 127 {
                let v = Int(rssi)
                report.devices[i].rssiMin = min(report.devices[i].rssiMin ?? v, v)
                report.devices[i].rssiMax = max(report.devices[i].rssiMax ?? v, v)
            }
            guard !rep.data.isEmpty else { return }
            for s in rep.structures {
                switch s.type.rawValue {
                case 0x08, 0x09:
                    let name = String(decoding: s.value, as: UTF8.self)
                    if !name.isEmpty, !report.devices[i].names.contains(name), report.devices[i].names.count < StatsLimits.namesPerDevice {
                        report.devices[i].names.append(name)
                    }
                case 0xFF where s.value.count >= 2:
                    let id = UInt16(s.value[0]) | UInt16(s.value[1]) << 8
                    let company = AssignedNumbers.companyName(id) ?? Hex.fixed(UInt64(id), width: 4)
                    if !report.devices[i].companies.contains(company), report.devices[i].companies.count < StatsLimits.namesPerDevice {
                        report.devices[i].companies.append(company)
                    }
                default: break
                }
            }
        }
    }
}
