import Testing
import Foundation
import BluesiftWire
@testable import BluesiftPlugins

/// No shipped advertising plugin takes a report another plugin owns (issue 37). For every
/// ordered pair (taker, owner) of shipped plugins and each advertising example of the owner:
/// if the taker's rules alone take the example, the pair must be listed below as a legitimate
/// overlap (a generic format and a specific one inside it), and in a set holding both, the
/// taker loaded first (so a tie would go to it), the listed plugin must win.
@Suite struct PluginCollisionTests {
    static let shipped: [Plugin] = PluginLoader.load(directories: [Fixtures.pluginsDir]).plugins

    /// "taker owner" → the plugin that must decode the owner's examples when both are loaded.
    static let overlaps: [String: String] = [
        // Apple's manufacturer data: Continuity decodes every type; an iBeacon (type 02 15) is
        // ibeacon's, and iBeacons with the Tilt or Cypress proximity UUID are theirs.
        "apple-continuity ibeacon": "ibeacon",
        "apple-continuity tilt": "tilt",
        "apple-continuity cypress-beacon": "cypress-beacon",
        "ibeacon tilt": "tilt",
        "ibeacon cypress-beacon": "cypress-beacon",
        // Eddystone's service data: eddystone decodes every frame type; KKM's sensor frames
        // (type 0x21) are kkm's, and URLs https://ruu.vi/#… (RuuviTag formats 2 and 4; any
        // tx power) are ruuvitag's.
        "eddystone kkm": "kkm",
        "eddystone ruuvitag": "ruuvitag"
    ]

    @Test func everyExampleBelongsToItsPluginAgainstEveryOther() {
        let plugins = Self.shipped
        #expect(plugins.count >= 50)
        var stolen: [String] = []
        var seen = Set<String>()
        var checked = 0
        for owner in plugins {
            for ex in owner.examples {
                guard let target = ex.advertising else { continue }
                for taker in plugins where taker.id != owner.id && taker.matches.contains(where: { $0.advertising != nil }) {
                    checked += 1
                    let pair = "\(taker.id) \(owner.id)"
                    guard taker.decodeAdvertisingExample(ex, target, in: PluginSet([taker])) != nil else { continue }
                    seen.insert(pair)
                    guard let expected = Self.overlaps[pair] else {
                        stolen.append("\(owner.id).yaml:\(ex.line) (\(target)) is taken by \(taker.id)'s rules, an overlap not listed")
                        continue
                    }
                    let set = PluginSet([taker, owner])
                    let got = owner.decodeAdvertisingExample(ex, target, in: set).map { set.plugins[$0.plugin].id }
                    if got != expected {
                        stolen.append("\(owner.id).yaml:\(ex.line) (\(target)) decoded by \(got ?? "nothing") with \(taker.id) loaded first, expected \(expected)")
                    }
                }
            }
        }
        #expect(checked > 10_000)
        #expect(stolen.isEmpty, "\(stolen.count) collisions:\n\(stolen.joined(separator: "\n"))")
        // Every listed overlap still occurs (a stale entry would hide nothing, but says what is not so).
        #expect(Set(Self.overlaps.keys).subtracting(seen).isEmpty, "listed, not seen: \(Set(Self.overlaps.keys).subtracting(seen).sorted())")
    }

    /// The same over the whole set in shipped order: what `dump` does with every example.
    @Test func everyExampleIsDecodedByItsOwnPluginInTheShippedSet() {
        let set = PluginSet(Self.shipped)
        var wrong: [String] = []
        for owner in Self.shipped {
            for ex in owner.examples {
                guard let target = ex.advertising else { continue }
                let got = owner.decodeAdvertisingExample(ex, target, in: set).map { set.plugins[$0.plugin].id }
                if got != owner.id { wrong.append("\(owner.id).yaml:\(ex.line) → \(got ?? "nothing")") }
            }
        }
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }
}
