/// A small, safe integer expression language for sizes, conditions, switch selectors and
/// computed values: `+ - * / % & | ^ << >> == != < <= > >= && || ! ~`, parentheses,
/// integer literals (decimal, 0x, 0b), field references (`len`, `request.cmd`) and the
/// specials `_remaining`, `_size`, `_offset`, `_index`. Arithmetic wraps (Int64); division
/// by zero and out-of-range shifts are errors, never traps.
public indirect enum Expr: Sendable, CustomStringConvertible {
    case literal(Int64)
    case ref(String)
    case unary(UnaryOp, Expr)
    case binary(BinaryOp, Expr, Expr)

    public enum UnaryOp: String, Sendable { case neg = "-", not = "!", inv = "~" }
    public enum BinaryOp: String, Sendable {
        case add = "+", sub = "-", mul = "*", div = "/", mod = "%"
        case and = "&", or = "|", xor = "^", shl = "<<", shr = ">>"
        case eq = "==", ne = "!=", lt = "<", le = "<=", gt = ">", ge = ">="
        case land = "&&", lor = "||"

        var precedence: Int {
            switch self {
            case .lor: 1
            case .land: 2
            case .or: 3
            case .xor: 4
            case .and: 5
            case .eq, .ne: 6
            case .lt, .le, .gt, .ge: 7
            case .shl, .shr: 8
            case .add, .sub: 9
            case .mul, .div, .mod: 10
            }
        }
    }

    public var description: String {
        switch self {
        case .literal(let v): String(v)
        case .ref(let n): n
        case .unary(let op, let e): op.rawValue + e.description
        case .binary(let op, let a, let b): "(" + a.description + " " + op.rawValue + " " + b.description + ")"
        }
    }

    /// Every field name the expression reads.
    public var references: [String] {
        switch self {
        case .literal: []
        case .ref(let n): [n]
        case .unary(_, let e): e.references
        case .binary(_, let a, let b): a.references + b.references
        }
    }

    public struct ParseError: Error, Sendable { public var message: String }
    public struct EvalError: Error, Sendable { public var message: String }

    static let maxDepth = 32
    static let maxLength = 1024

    /// Parses an expression; a bare YAML integer is a literal.
    public static func parse(_ text: String) throws(ParseError) -> Expr {
        guard text.utf8.count <= maxLength else { throw ParseError(message: "expression longer than \(maxLength) characters") }
        var p = ExprParser(Array(text.utf8))
        let e = try p.parseBinary(minPrecedence: 1, depth: 0)
        p.skipSpace()
        guard p.i == p.s.count else { throw ParseError(message: "unexpected '\(p.rest)' in expression '\(text)'") }
        return e
    }

    /// Evaluates with `lookup` resolving references (nil: undefined → error).
    public func evaluate(_ lookup: (String) -> Int64?) throws(EvalError) -> Int64 {
        switch self {
        case .literal(let v): return v
        case .ref(let n):
            guard let v = lookup(n) else { throw EvalError(message: "'\(n)' is not defined here") }
            return v
        case .unary(let op, let e):
            let v = try e.evaluate(lookup)
            switch op {
            case .neg: return 0 &- v
            case .not: return v == 0 ? 1 : 0
            case .inv: return ~v
            }
        case .binary(let op, let a, let b):
            let x = try a.evaluate(lookup)
            // Short-circuit so `n > 0 && total / n > 2` is safe.
            if op == .land, x == 0 { return 0 }
            if op == .lor, x != 0 { return 1 }
            let y = try b.evaluate(lookup)
            switch op {
            case .add: return x &+ y
            case .sub: return x &- y
            case .mul: return x &* y
            case .div:
                guard y != 0 else { throw EvalError(message: "division by zero in '\(description)'") }
                return y == -1 ? 0 &- x : x / y
            case .mod:
                guard y != 0 else { throw EvalError(message: "division by zero in '\(description)'") }
                return y == -1 ? 0 : x % y
            case .and: return x & y
            case .or: return x | y
            case .xor: return x ^ y
            case .shl, .shr:
                guard y >= 0 && y < 64 else { throw EvalError(message: "shift by \(y) in '\(description)'") }
                return op == .shl ? x << y : x >> y
            case .eq: return x == y ? 1 : 0
            case .ne: return x != y ? 1 : 0
            case .lt: return x < y ? 1 : 0
            case .le: return x <= y ? 1 : 0
            case .gt: return x > y ? 1 : 0
            case .ge: return x >= y ? 1 : 0
            case .land, .lor: return y != 0 ? 1 : 0
            }
        }
    }
}

struct ExprParser {
    let s: [UInt8]
    var i = 0
    init(_ s: [UInt8]) { self.s = s }

    var rest: String { String(decoding: s[min(i, s.count)...], as: UTF8.self) }

    mutating func skipSpace() { while i < s.count, s[i] == 0x20 || s[i] == 0x09 { i += 1 } }

    mutating func peekOperator() -> Expr.BinaryOp? {
        skipSpace()
        guard i < s.count else { return nil }
        let c = s[i], n: UInt8 = i + 1 < s.count ? s[i + 1] : 0
        switch (c, n) {
        case (0x3C, 0x3C): return .shl // <<
        case (0x3E, 0x3E): return .shr // >>
        case (0x3C, 0x3D): return .le
        case (0x3E, 0x3D): return .ge
        case (0x3D, 0x3D): return .eq
        case (0x21, 0x3D): return .ne
        case (0x26, 0x26): return .land
        case (0x7C, 0x7C): return .lor
        case (0x3C, _): return .lt
        case (0x3E, _): return .gt
        case (0x26, _): return .and
        case (0x7C, _): return .or
        case (0x5E, _): return .xor
        case (0x2B, _): return .add
        case (0x2D, _): return .sub
        case (0x2A, _): return .mul
        case (0x2F, _): return .div
        case (0x25, _): return .mod
        default: return nil
        }
    }

    /// Precedence climbing.
    mutating func parseBinary(minPrecedence: Int, depth: Int) throws(Expr.ParseError) -> Expr {
        guard depth < Expr.maxDepth else { throw Expr.ParseError(message: "expression nested too deeply") }
        var lhs = try parseUnary(depth: depth + 1)
        while let op = peekOperator(), op.precedence >= minPrecedence {
            i += op.rawValue.utf8.count
            let rhs = try parseBinary(minPrecedence: op.precedence + 1, depth: depth + 1)
            lhs = .binary(op, lhs, rhs)
        }
        return lhs
    }

    mutating func parseUnary(depth: Int) throws(Expr.ParseError) -> Expr {
        guard depth < Expr.maxDepth else { throw Expr.ParseError(message: "expression nested too deeply") }
        skipSpace()
        guard i < s.count else { throw Expr.ParseError(message: "expression ends early") }
        switch s[i] {
        case 0x2D: i += 1; return .unary(.neg, try parseUnary(depth: depth + 1))
        case 0x21: i += 1; return .unary(.not, try parseUnary(depth: depth + 1))
        case 0x7E: i += 1; return .unary(.inv, try parseUnary(depth: depth + 1))
        case 0x28:
            i += 1
            let e = try parseBinary(minPrecedence: 1, depth: depth + 1)
            skipSpace()
            guard i < s.count, s[i] == 0x29 else { throw Expr.ParseError(message: "missing ')'") }
            i += 1
            return e
        case 0x30...0x39:
            let start = i
            while i < s.count, isIdent(s[i]) { i += 1 }
            let text = String(decoding: s[start..<i], as: UTF8.self)
            guard let v = parseIntegerLiteral(text) else { throw Expr.ParseError(message: "bad number '\(text)'") }
            return .literal(v)
        case let c where isIdentStart(c):
            let start = i
            while i < s.count, isIdent(s[i]) || s[i] == 0x2E { i += 1 }
            return .ref(String(decoding: s[start..<i], as: UTF8.self))
        default:
            throw Expr.ParseError(message: "unexpected '\(rest)'")
        }
    }

    func isIdentStart(_ c: UInt8) -> Bool { (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || c == 0x5F }
    func isIdent(_ c: UInt8) -> Bool { isIdentStart(c) || (0x30...0x39).contains(c) }
}

/// "42", "0x2a", "0b101010", "-3", "1_000" → Int64 (values up to UInt64.max wrap into Int64).
func parseIntegerLiteral(_ text: String) -> Int64? {
    var t = Substring(text.filter { $0 != "_" })
    var negative = false
    if t.hasPrefix("-") { negative = true; t = t.dropFirst() } else if t.hasPrefix("+") { t = t.dropFirst() }
    let v: UInt64?
    if t.hasPrefix("0x") || t.hasPrefix("0X") { v = UInt64(t.dropFirst(2), radix: 16) } else if t.hasPrefix("0b") || t.hasPrefix("0B") { v = UInt64(t.dropFirst(2), radix: 2) } else { v = UInt64(t, radix: 10) }
    guard let v else { return nil }
    let s = Int64(bitPattern: v)
    return negative ? 0 &- s : s
}
