import BluesiftWire
import BluesiftCapture
import BluesiftProtocols
import BluesiftGATT

/// `stats` of advertising reports: devices, names, companies, RSSI; and the sensor readings
/// plugins decode from advertising data.
final class AdvertisingStats {
    var deviceIndex: [BDAddr: Int] = [:]
    /// Sensor readings decoded from advertising data (the report keeps their series too).
    var sensors = SensorTable()

    func add(_ a: inout AnalyzedFrame, _ r: CaptureRecord, _ us: Int64, _ s: CaptureStats) {
        a.decoded.advStorage.forEachReport { rep in
            guard let addr = rep.address else { return }
            s.report.counts.advertisingReports += 1
            let i: Int
            if let d = deviceIndex[addr] {
                i = d
            } else {
                guard s.report.devices.count < StatsLimits.devices else { s.report.devicesNotListed += 1; return }
                i = s.report.devices.count
                deviceIndex[addr] = i
                s.report.devices.append(
                    .init(
                        address: addr.description, addressType: rep.addressType?.name,
                        firstFrame: r.frame, lastFrame: r.frame, firstUs: us, lastUs: us))
            }
            s.report.devices[i].advertisingReports += 1
            s.report.devices[i].lastFrame = r.frame; s.report.devices[i].lastUs = us
            if let rssi = rep.rssi, rssi != 127 {
                let v = Int(rssi)
                s.report.devices[i].rssiMin = min(s.report.devices[i].rssiMin ?? v, v)
                s.report.devices[i].rssiMax = max(s.report.devices[i].rssiMax ?? v, v)
            }
            guard !rep.data.isEmpty else { return }
            for st in rep.structures {
                switch st.type.rawValue {
                case 0x08, 0x09:
                    let name = String(decoding: st.value, as: UTF8.self)
                    if !name.isEmpty, !s.report.devices[i].names.contains(name), s.report.devices[i].names.count < StatsLimits.namesPerDevice {
                        s.report.devices[i].names.append(name)
                    }
                case 0xFF where st.value.count >= 2:
                    let id = UInt16(st.value[0]) | UInt16(st.value[1]) << 8
                    let company = AssignedNumbers.companyName(id) ?? Hex.fixed(UInt64(id), width: 4)
                    if !s.report.devices[i].companies.contains(company), s.report.devices[i].companies.count < StatsLimits.namesPerDevice {
                        s.report.devices[i].companies.append(company)
                    }
                default: break
                }
            }
        }
        if let v = a.vendor, !v.sources.isEmpty { sensors.add(v, us: us, frame: r.frame) }
    }
}
