import ArgumentParser
import BluesiftReplay

/// A value its type parses from the command line (ExpressibleByArgument). Text it cannot
/// parse is kept, and the command's `validate()` says it in the documented form
/// ("bluesift: --timing: expected …", exit 64) rather than ArgumentParser's own message.
protocol ArgumentValue {
    init?(argumentText: String)
}

struct Checked<Value: ArgumentValue>: ExpressibleByArgument {
    let text: String
    let value: Value?

    init(argument: String) { text = argument; value = Value(argumentText: argument) }

    var defaultValueDescription: String { text }

    /// The value, or the usage line (exit 64) when the text is not one.
    func get(_ option: String, expected: String) throws -> Value {
        guard let value else { throw usage(option, expected, text) }
        return value
    }
}

extension ReplayRunner.Timing: ArgumentValue {
    init?(argumentText: String) { self.init(parsing: argumentText) }
}

extension Emulator.Timing: ArgumentValue {
    init?(argumentText: String) {
        switch argumentText {
        case "recorded": self = .recorded
        case "asap": self = .asap
        default: return nil
        }
    }
}

extension PairMode: ArgumentValue {
    init?(argumentText: String) { self.init(rawValue: argumentText) }
}
