import Testing
import BluesiftWire
@testable import BluesiftDissect

/// One RFC 4180 quoting for every CSV output: stats' fields quoted a CR as dump's did not.
@Suite struct CSVQuoteTests {
    @Test func statsQuotesCarriageReturn() {
        // A device name from the air with a CR (or CRLF) would otherwise break the row.
        #expect(StatsRender.csvField("Lamp\rA") == "\"Lamp\rA\"")
        #expect(StatsRender.csvField("Lamp\r\nA") == "\"Lamp\r\nA\"")
    }

    @Test func statsQuotingUnchangedOtherwise() {
        #expect(StatsRender.csvField(nil) == "")
        #expect(StatsRender.csvField("Heart Rate") == "Heart Rate")
        #expect(StatsRender.csvField("a,b") == "\"a,b\"")
        #expect(StatsRender.csvField("say \"hi\"") == "\"say \"\"hi\"\"\"")
        #expect(StatsRender.csvField("two\nlines") == "\"two\nlines\"")
    }

    @Test func oneQuotingForAll() {
        for s in ["plain", "a,b", "q\"q", "l\nf", "c\rr", "c\r\nl", ""] {
            #expect(StatsRender.csvField(s) == CSV.quote(s))
        }
        #expect(CSV.quote("c\rr") == "\"c\rr\"")
    }
}
