import HeraldXMPP
import Testing

/// The XMPP stream reader: whole stanzas from bytes in any pieces, and only what XMPP allows.
@Suite struct XMPPStreamParserTests {
    static let opening =
        "<?xml version='1.0'?><stream:stream to='fcm.googleapis.com' version='1.0' xmlns='jabber:client' "
        + "xmlns:stream='http://etherx.jabber.org/streams'>"

    private func events(_ pieces: [String]) throws -> [XMPPStreamParser.Event] {
        var parser = XMPPStreamParser()
        var events: [XMPPStreamParser.Event] = []
        for piece in pieces { events += try parser.parse(Array(piece.utf8)) }
        return events
    }

    private func expectFailure(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) {
        var parser = XMPPStreamParser()
        #expect(throws: XMPPStreamParser.Failure.self, sourceLocation: sourceLocation) {
            _ = try parser.parse(Array((Self.opening + text).utf8))
        }
    }

    @Test func aStanzaArrivesWholeWhateverPiecesItComesIn() throws {
        let stanza =
            #"<message id="1"><gcm xmlns="google:mobile:data">{"to":"a &amp; b","n":"&#x41;&#66;"}</gcm></message>"#
        let whole = try events([Self.opening + stanza])
        let text = Self.opening + stanza
        // Every split point, byte by byte.
        for cut in stride(from: 1, to: text.utf8.count, by: 7) {
            let bytes = Array(text.utf8)
            var parser = XMPPStreamParser()
            let split = try parser.parse(bytes[..<cut]) + parser.parse(bytes[cut...])
            #expect(split == whole)
        }
        guard case .streamOpened(let stream) = whole.first, case .stanza(let message) = whole.last else {
            Issue.record("\(whole)")
            return
        }
        #expect(stream.localName == "stream")
        #expect(stream.attribute("to") == "fcm.googleapis.com")
        #expect(message.attribute("id") == "1")
        #expect(message.child("gcm")?.attribute("xmlns") == "google:mobile:data")
        #expect(message.child("gcm")?.text == #"{"to":"a & b","n":"AB"}"#)
    }

    @Test func whitespaceBetweenStanzasIsAKeepaliveAndTheCloseIsSeen() throws {
        let seen = try events([Self.opening, " ", "<presence/>", "\n", "</stream:stream>"])
        #expect(seen.count == 5)
        #expect(seen[1] == .whitespace)
        #expect(seen[2] == .stanza(XMPPElement("presence")))
        #expect(seen[4] == .streamClosed)
    }

    @Test func restartingForgetsTheOldStream() throws {
        var parser = XMPPStreamParser()
        _ = try parser.parse(Array(Self.opening.utf8))
        parser.restart()
        let again = try parser.parse(Array(Self.opening.utf8))
        guard case .streamOpened = again.first else {
            Issue.record("\(again)")
            return
        }
    }

    @Test func whatXMPPForbidsFailsTheStream() {
        expectFailure("<!-- a comment -->")
        expectFailure("<!DOCTYPE x>")
        expectFailure("<message><![CDATA[x]]></message>")
        expectFailure("<?pi after the start?>")
        expectFailure("text between stanzas")
        expectFailure("<message>&unknown;</message>")
        expectFailure("<message></iq>")
        expectFailure("<message id=unquoted/>")
        expectFailure("<message id='a<b'/>")
        var parser = XMPPStreamParser()
        #expect(throws: XMPPStreamParser.Failure.self) { _ = try parser.parse(Array("<message/>".utf8)) }
    }

    @Test func stanzasOverTheLimitsFailTheStream() {
        let big = String(repeating: "x", count: XMPPStreamParser.maximumStanzaBytes)
        expectFailure("<message>\(big)</message>")
        // Also when the stanza never ends.
        expectFailure("<message>\(big)")
        expectFailure(String(repeating: "<a>", count: XMPPStreamParser.maximumDepth + 1))
        let attributes = (0...XMPPStreamParser.maximumAttributes).map { "a\($0)='v'" }.joined(separator: " ")
        expectFailure("<message \(attributes)/>")
    }

    @Test func elementsAreWrittenBackWithTheirReservedCharactersEscaped() {
        let element = XMPPElement(
            "message", attributes: [("id", #"a"b"#)],
            children: [
                .element(XMPPElement("gcm", attributes: [("xmlns", "google:mobile:data")], children: [.text("<&>")]))
            ])
        #expect(
            element.rendered == #"<message id="a&quot;b"><gcm xmlns="google:mobile:data">&lt;&amp;&gt;</gcm></message>"#
        )
    }
}
