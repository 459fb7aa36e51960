import Foundation
import BluesiftWire
import BluesiftGATT

/// `FILE:LINE:COLUMN: message` for a JSON file the user wrote or edited (a GATT database, a
/// replay script): the syntax error or the value a decoder refused, never Foundation's text.
func jsonErrorLine(file: String, data: Data, error: Error) -> String {
    let bytes = [UInt8](data)
    func at(_ offset: Int, _ message: String) -> String {
        let (l, c) = JSONLocator.lineColumn(bytes, offset: offset)
        return "\(file):\(l):\(c): \(message)"
    }
    if let e = JSONLocator.syntaxError(bytes) { return at(e.offset, e.message) }
    if let e = error as? GATTJSON.ImportError {
        return at(e.offset ?? JSONLocator.offset(of: e.path, in: bytes) ?? 0, e.description)
    }
    guard let d = error as? DecodingError else { return at(0, "\(error)") }
    let path: [CodingKey], message: String
    switch d {
    case .keyNotFound(let k, let ctx):
        path = ctx.codingPath
        message = "missing \"\(snakeCase(k.stringValue))\""
    case .typeMismatch(let t, let ctx):
        path = ctx.codingPath
        message = "expected \(typeName(t))"
    case .valueNotFound(let t, let ctx):
        path = ctx.codingPath
        message = "expected \(typeName(t)), found null"
    case .dataCorrupted(let ctx):
        path = ctx.codingPath
        message = ctx.underlyingError == nil ? ctx.debugDescription : "not valid JSON"
    @unknown default:
        return at(0, "cannot decode")
    }
    let keys: [JSONLocator.Key] = path.map { k in k.intValue.map { .index($0) } ?? .key(snakeCase(k.stringValue)) }
    let where_ = keys.isEmpty ? "" : JSONLocator.text(keys) + ": "
    return at(JSONLocator.offset(of: keys, in: bytes) ?? 0, where_ + message)
}

/// The file's keys are snake_case; a decoder converting from snake case reports camelCase.
func snakeCase(_ s: String) -> String {
    var out = ""
    for c in s {
        if c.isUppercase { out += "_" + c.lowercased() } else { out.append(c) }
    }
    return out
}

func typeName(_ t: Any.Type) -> String {
    switch t {
    case is String.Type: "a string"
    case is Int.Type, is Int64.Type, is UInt16.Type, is UInt8.Type, is UInt32.Type: "an integer"
    case is Double.Type, is Float.Type: "a number"
    case is Bool.Type: "true or false"
    default:
        "\(t)".hasPrefix("Array") ? "an array" : "\(t)".hasPrefix("Dictionary") ? "an object" : "an object (\(t))"
    }
}
