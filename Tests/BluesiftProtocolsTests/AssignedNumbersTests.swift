import Testing
import BluesiftWire
@testable import BluesiftProtocols

/// Names as the generated table has them (Nordic bluetooth-numbers-database + tshark units).
@Suite struct AssignedNumbersTests {
    @Test func uuidNames() {
        #expect(AssignedNumbers.uuidName(BluetoothUUID(0x180F)) == "Battery Service")
        #expect(AssignedNumbers.uuidName(BluetoothUUID(0x2A19)) == "Battery Level")
        #expect(AssignedNumbers.uuidName(BluetoothUUID(0x2902)) == "Client Characteristic Configuration")
        #expect(AssignedNumbers.uuidName(BluetoothUUID(0x2800)) == "Primary Service")
        #expect(AssignedNumbers.uuidName(BluetoothUUID(0xFD62)) == "Fitbit, Inc.")
        #expect(AssignedNumbers.uuidName(BluetoothUUID(string: "6e400001-b5a3-f393-e0a9-e50e24dcca9e")!) == "Nordic UART Service")
        #expect(AssignedNumbers.uuidName(BluetoothUUID(string: "12345678-0000-0000-0000-000000000000")!) == nil)
        #expect(AssignedNumbers.uuidName(BluetoothUUID(0x1234_5678)) == nil)
    }

    @Test func companyAppearanceUnitNames() {
        #expect(AssignedNumbers.companyName(0x004C) == "Apple, Inc.")
        #expect(AssignedNumbers.companyName(0x0059) == "Nordic Semiconductor ASA")
        #expect(AssignedNumbers.companyName(0x000F) == "Broadcom Corporation")
        #expect(AssignedNumbers.appearanceName(0x03C1) == "Human Interface Device: Keyboard")
        #expect(AssignedNumbers.appearanceName(0x03C0) == "Human Interface Device")
        #expect(AssignedNumbers.appearanceName(0x03FF) == "Human Interface Device") // unassigned subcategory
        #expect(AssignedNumbers.unitName(0x272F) == "Celsius temperature (degree Celsius)")
        #expect(AssignedNumbers.unitName(0x27AD) == "percentage")
        #expect(AssignedNumbers.unitName(0x2A19) == nil)
    }

    @Test func namesReachDecodedLayers() {
        // Read By Type Request for Device Name (pongbot frame 272) and an iBeacon's company.
        withBytes("08 01 00 ff ff 00 2a") { p in
            #expect(json(ATTPDU(bytes: p)).contains(#""uuid":"2a00","uuid_name":"Device Name""#))
        }
        withBytes("02 01 00 01 02 03 04 05 06 07 1b 1a ff 4c 00 02 15 fd a5 06 93 a4 e2 4f b1 af cf c6 eb 07 64 78 25 00 05 00 06 b0 b6") { p in
            let a = AdvertisingLayer(leMetaSubevent: 0x02, parameters: UnsafeRawBufferPointer(rebasing: p[1...]))
            #expect(json(a).contains(#""company_id":76,"company_name":"Apple, Inc.","data":"0215"#))
        }
    }
}
