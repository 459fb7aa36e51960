import BluesiftWire

extension ATTPDU {
    /// Fields of the `att` JSON object: opcode, name, then the PDU's own fields.
    public func describe<S: FieldSink>(into sink: inout S) {
        sink.int("opcode", Int(opcode.rawValue)); sink.string("name", opcode.name)
        if let requestOpcode {
            sink.int("request_opcode", Int(requestOpcode.rawValue))
            sink.string("request_name", requestOpcode.name)
        }
        if let errorHandle { sink.int("error_handle", Int(errorHandle)) }
        if let errorCode {
            sink.int("error", Int(errorCode))
            sink.string("error_name", ATTErrorCode(rawValue: errorCode).name)
        }
        if let mtu { sink.int("mtu", Int(mtu)) }
        if let startHandle { sink.int("start_handle", Int(startHandle)) }
        if let endHandle { sink.int("end_handle", Int(endHandle)) }
        if let attributeType { Self.describeUUID(attributeType, into: &sink) }
        if let handle { sink.int("handle", Int(handle)) }
        if let offset { sink.int("offset", Int(offset)) }
        if let flags { sink.int("flags", Int(flags)) }
        if let format { sink.int("format", Int(format)) }
        if let entryLength { sink.int("length", Int(entryLength)) }
        if let value { sink.hex("value", value) }
        if let signature { sink.hex("signature", signature) }
        describeEntries(into: &sink)
    }

    static func describeUUID<S: FieldSink>(_ u: BluetoothUUID, into sink: inout S) {
        sink.string("uuid", u.description)
        sink.optionalString("uuid_name", AssignedNumbers.uuidName(u))
    }

    private func describeEntries<S: FieldSink>(into sink: inout S) {
        if let l = findInformation {
            sink.beginArray("entries")
            for e in l {
                sink.beginObject(""); sink.int("handle", Int(e.handle)); Self.describeUUID(e.uuid, into: &sink); sink.endObject()
            }
            sink.endArray()
        } else if let l = handleRanges {
            sink.beginArray("entries")
            for e in l {
                sink.beginObject(""); sink.int("start_handle", Int(e.start)); sink.int("end_handle", Int(e.end)); sink.endObject()
            }
            sink.endArray()
        } else if let l = attributeData {
            sink.beginArray("entries")
            for e in l {
                sink.beginObject(""); sink.int("handle", Int(e.handle)); sink.hex("value", e.value); sink.endObject()
            }
            sink.endArray()
        } else if let l = groupData {
            sink.beginArray("entries")
            for e in l {
                sink.beginObject("")
                sink.int("start_handle", Int(e.start)); sink.int("end_handle", Int(e.end)); sink.hex("value", e.value)
                sink.endObject()
            }
            sink.endArray()
        } else if let l = handles {
            sink.beginArray("handles")
            for h in l { sink.int("", Int(h)) }
            sink.endArray()
        } else if let l = lengthValues {
            sink.beginArray("entries")
            for e in l {
                sink.beginObject(""); sink.int("length", Int(e.length)); sink.hex("value", e.value); sink.endObject()
            }
            sink.endArray()
        } else if let l = handleValues {
            sink.beginArray("entries")
            for e in l {
                sink.beginObject(""); sink.int("handle", Int(e.handle)); sink.hex("value", e.value); sink.endObject()
            }
            sink.endArray()
        }
    }

    /// One-line summary, e.g. "ATT Write Request handle=0x0019 value=a50603"
    public var summary: String {
        var s = "ATT " + opcode.name
        if let requestOpcode, let errorHandle, let errorCode {
            s += " to " + requestOpcode.name + " handle=" + Hex.fixed(UInt64(errorHandle), width: 4)
            s += " error=" + Hex.fixed(UInt64(errorCode), width: 2) + " " + ATTErrorCode(rawValue: errorCode).name
        }
        if let mtu { s += " mtu=\(mtu)" }
        if let startHandle, let endHandle {
            s += " range=" + Hex.fixed(UInt64(startHandle), width: 4) + "-" + Hex.fixed(UInt64(endHandle), width: 4)
        }
        if let attributeType {
            s += " uuid=" + attributeType.description
            if let n = AssignedNumbers.uuidName(attributeType) { s += " (" + n + ")" }
        }
        if let handle { s += " handle=" + Hex.fixed(UInt64(handle), width: 4) }
        if let offset { s += " offset=\(offset)" }
        if let flags { s += " flags=\(flags)" }
        if let value {
            let shown = min(value.count, 32)
            s += " value=" + Hex.string(UnsafeRawBufferPointer(rebasing: value[0..<shown]))
            if shown < value.count { s += "…(\(value.count) bytes)" }
        }
        if let list, !list.isEmpty, value == nil {
            var n = 0
            if let l = findInformation {
                n = l.walkedCount
            } else if let l = handleRanges {
                n = l.walkedCount
            } else if let l = attributeData {
                n = l.walkedCount
            } else if let l = groupData {
                n = l.walkedCount
            } else if let l = handles {
                n = l.walkedCount
            } else if let l = lengthValues {
                n = l.walkedCount
            } else if let l = handleValues {
                n = l.walkedCount
            }
            s += " entries=\(n)"
        }
        if let error { s += " [" + error.message + "]" }
        return s
    }
}

extension Sequence {
    /// Counts the elements by iterating (the lists are views, not collections).
    var walkedCount: Int { var n = 0; for _ in self { n += 1 }; return n }
}
