import HeraldXMPP

/// An XMPP stream from an app server (reachable before it authenticates), read in two
/// pieces split where its first byte says, and handed to a session as far as it goes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: data, count: count))
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    var parser = XMPPStreamParser()
    var session = XMPPSession(streamID: "fuzz")
    for piece in [bytes[..<cut], bytes[cut...]] {
        guard let events = try? parser.parse(piece) else { return 0 }
        for event in events {
            for action in session.received(event) {
                if case .authenticate = action { _ = session.authenticated(.accepted) }
                if case .restartStream = action { parser.restart() }
                if case .send(let message) = action { _ = session.answered(message, error: nil) }
            }
        }
    }
    return 0
}
