import Testing
import Foundation

/// What every run pays before reading a record.
@Suite struct StartupTests {
    /// ArgumentParser builds the whole command tree at each start, and names a command that
    /// does not name itself by `String(describing:)` of its type: a search of the binary's
    /// protocol conformances per command (36 M of the 70 M instructions a `dump` of the
    /// bundled capture took). Every command's configuration names it, as its type would.
    @Test func everyCommandNamesItself() throws {
        let dir = CLI.root.appendingPathComponent("Sources/bluesift")
        var commands: [String] = []
        for file in try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted() where file.hasSuffix(".swift") {
            let text = try String(contentsOf: dir.appendingPathComponent(file), encoding: .utf8)
            var rest = Substring(text)
            while let decl = rest.range(of: #"struct (\w+): (Async)?ParsableCommand \{"#, options: .regularExpression) {
                let name = rest[decl].dropFirst("struct ".count).prefix { $0 != ":" }
                let after = rest[decl.upperBound...]
                let config = try #require(after.range(of: "CommandConfiguration("), "\(file): \(name) has no configuration")
                let args = after[config.upperBound...].drop { $0 == " " || $0 == "\n" }
                #expect(args.hasPrefix("commandName: \"\(name.lowercased())\""), "\(file): \(name)")
                commands.append(String(name))
                rest = after
            }
        }
        #expect(commands.count == 25 && commands.contains("Bluesift") && commands.contains("Bench"), "\(commands)")
    }
}
