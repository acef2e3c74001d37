import HeraldGateway
import NIOCore
import Testing

/// The opening handshake Mozilla's push protocol connections are answered with, and how the
/// plain HTTP port tells a WebSocket client from HTTP.
@Suite struct WebSocketHandshakeTests {
    static let upgrade =
        "GET / HTTP/1.1\r\nHost: push.example\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"

    func asks(_ text: String) -> Bool { WebSocketHandshake.asksForWebSocket(Array(text.utf8)) }

    func answer(_ text: String) -> WebSocketHandshake.Answer { WebSocketHandshake.answer(Array(text.utf8)) }

    @Test func aGetAskingForAWebSocketGoesToTheGateway() {
        #expect(asks(Self.upgrade))
        #expect(asks("GET /x HTTP/1.1\r\nupgrade:WebSocket\r\n\r\n"))
        #expect(asks("GET / HTTP/1.1\r\nUpgrade: h2c, websocket\r\n\r\n"))
    }

    @Test func everythingElseIsHTTP() {
        #expect(!asks("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(!asks("POST / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"))
        #expect(!asks("GET / HTTP/1.1\r\nX-Upgrade: websocket\r\n\r\n"))
        #expect(!asks("GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n"))
    }

    @Test func theHeadEndsAtItsBlankLine() {
        #expect(WebSocketHandshake.headEnd(Array("GET / HTTP/1.1\r\nA: b\r\n\r\nbody".utf8)) == 24)
        #expect(WebSocketHandshake.headEnd(Array("GET / HTTP/1.1\r\r\nA: b\r\n\r\r\n\r\n".utf8)) == 28)
        #expect(WebSocketHandshake.headEnd(Array("GET / HTTP/1.1\r\nA: b\r\n".utf8)) == nil)
    }

    @Test func anUpgradeIsAcceptedWithTheKeysHash() {
        // RFC 6455 §1.3's own example.
        let answer = answer(Self.upgrade)
        #expect(answer.upgraded)
        #expect(answer.response.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
        #expect(answer.response.contains("sec-websocket-accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
        #expect(answer.response.hasSuffix("\r\n\r\n"))
    }

    @Test func aRequestThatIsNotAVersion13UpgradeIsTold426() {
        for head in [
            "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
            Self.upgrade.replacingOccurrences(of: "Version: 13", with: "Version: 8"),
            Self.upgrade.replacingOccurrences(of: "keep-alive, Upgrade", with: "keep-alive"),
        ] {
            let answer = answer(head)
            #expect(!answer.upgraded)
            #expect(answer.response.hasPrefix("HTTP/1.1 426 Upgrade Required\r\n"))
            #expect(answer.response.contains("sec-websocket-version: 13\r\n"))
            #expect(answer.response.contains("connection: close\r\n"))
        }
    }

    @Test func aKeyThatIsNot16BytesIs400() {
        for key in ["", "abc", "dGhlIHNhbXBsZSBub25jZSE="] {
            let answer = answer(Self.upgrade.replacingOccurrences(of: "dGhlIHNhbXBsZSBub25jZQ==", with: key))
            #expect(!answer.upgraded)
            #expect(answer.response.hasPrefix("HTTP/1.1 400 Bad Request\r\n"))
        }
    }
}
