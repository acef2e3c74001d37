import HeraldCore
import Testing

@Suite struct JSONParserTests {
    @Test func parsesEveryKindOfValueAndRendersItBack() throws {
        let text = #"{"a":[1,2.5,-3e2,true,false,null],"b":{"c":"d\"\\\/\n\u00e9\ud83d\ude00"},"e":""}"#
        let value = try JSONParser.parse(text)
        #expect(value["a"] == .array([.number(1), .number(2.5), .number(-300), .bool(true), .bool(false), .null]))
        #expect(value["b"]?["c"] == .string("d\"\\/\né😀"))
        #expect(try JSONParser.parse(value.rendered) == value)
    }

    @Test(arguments: [
        "", "{", "[1,]", "{\"a\":1,}", "01", "1.", "-", "tru", "\"abc", "\"\\x\"", "\"\\ud800\"", "{} x", "[1 2]",
        "\"\u{01}\"", "{\"a\" 1}", "nul",
    ])
    func rejectsMalformedDocuments(_ text: String) {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
    }

    @Test func limitsNestingDepth() throws {
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        _ = try JSONParser.parse(fine)
    }

    @Test func reportsTheOffsetOfTheProblem() {
        do {
            _ = try JSONParser.parse("{\"a\": tru}")
            Issue.record("expected a failure")
        } catch {
            #expect(error.offset == 6)
        }
    }

    @Test func escapesControlCharactersWhenRendering() throws {
        #expect(JSONValue.string("a\u{01}b\tc").rendered == #""a\u0001b\tc""#)
        // `\r\n` is one character, and so is a quote followed by a combining mark: escaping
        // must still cut inside them.
        #expect(Array(JSONValue.string("x\r\ny").rendered.utf8) == Array(#""x\r\ny""#.utf8))
        #expect(Array(JSONValue.string("\"\u{301}é😀\\").rendered.utf8) == Array("\"\\\"\u{301}é😀\\\\\"".utf8))
        for text in ["", "plain", "\u{1F}", "é\r\n\"", "😀\u{0}😀", "\"\"", "\\\u{301}\n\u{301}"] {
            #expect(try JSONParser.parse(JSONValue.string(text).rendered) == .string(text))
        }
    }
}

@Suite struct Base64URLTests {
    @Test func roundTripsEveryLength() {
        for count in 0..<40 {
            let bytes = (0..<count).map { UInt8(($0 * 37 + 11) % 256) }
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
            #expect(Base64URL.decode(Base64URL.encodePadded(bytes)) == bytes)
        }
    }

    @Test func nonCanonicalTrailingBitsAreRefused() {
        // "QQ" is the canonical encoding of [0x41]; "QR" differs only in unused bits.
        #expect(Base64URL.decode("QQ") == [0x41])
        #expect(Base64URL.decode("QR") == nil)
        #expect(Base64URL.decode("Q") == nil)
        #expect(Base64URL.decode("a b") == nil)
    }
}
