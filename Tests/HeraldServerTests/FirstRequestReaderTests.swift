import NIOCore
import Testing

@testable import HeraldServer

/// How the plain HTTP port tells a WebSocket client (Mozilla's push protocol) from HTTP.
@Suite struct FirstRequestReaderTests {
    func head(_ text: String) -> Bool {
        FirstRequestReader.asksForWebSocket(Array(text.utf8))
    }

    @Test func aGetAskingForAWebSocketGoesToTheGateway() {
        #expect(head("GET / HTTP/1.1\r\nHost: push.example\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"))
        #expect(head("GET /x HTTP/1.1\r\nupgrade:WebSocket\r\n\r\n"))
        #expect(head("GET / HTTP/1.1\r\nUpgrade: h2c, websocket\r\n\r\n"))
    }

    @Test func everythingElseIsHTTP() {
        #expect(!head("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"))
        #expect(!head("POST / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n"))
        #expect(!head("GET / HTTP/1.1\r\nX-Upgrade: websocket\r\n\r\n"))
        #expect(!head("GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n"))
    }

    @Test func theHeadEndsAtItsBlankLine() {
        let buffer = ByteBuffer(string: "GET / HTTP/1.1\r\nA: b\r\n\r\nbody")
        let view = buffer.readableBytesView
        #expect(FirstRequestReader.headEnd(view).map { $0 - view.startIndex } == 24)
        #expect(FirstRequestReader.headEnd(ByteBuffer(string: "GET / HTTP/1.1\r\nA: b\r\n").readableBytesView) == nil)
    }
}
