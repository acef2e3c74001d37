import HeraldCore
import HeraldProtocol

/// One MCS connection as the device sees it, from the login it sent until it ends: the
/// stream ids the server counts, when to send a heartbeat, when to give the connection up,
/// and which upstream messages the server has. A value fed with what happened and when; it
/// answers what to do, and `HeraldClient` does it (the device side of `MCSSession`).
struct MCSClientSession {
    /// What the client does next.
    enum Action: Equatable {
        /// Writes the frame.
        case write(MCSFrame)
        /// The server accepted the login: what waited for a connection can go now.
        case loggedIn
        /// Hands a data message to the app (a message, a push message, or a `send_error`).
        case receive(McsProto_DataMessageStanza)
        /// The server has the upstream message.
        case upstreamSent(messageID: String)
        /// Closes the connection.
        case close
    }

    /// Why a connection cannot go on.
    enum Failure: Error, Equatable {
        /// The server answered the login with something else.
        case unexpected(MCSTag)
        /// The server refused the login.
        case loginRefused(code: Int32, message: String)
    }

    /// How long a login may take.
    static let loginTimeout: Duration = .seconds(30)

    /// The idle time after which the client sends a heartbeat.
    let heartbeat: Duration
    private let openedAt: ContinuousClock.Instant
    private(set) var isLoggedIn = false
    private var lastInbound: ContinuousClock.Instant
    private var lastOutbound: ContinuousClock.Instant
    /// Stanzas written since the login, as the server counts them.
    private(set) var streamCount: Int32 = 0
    /// The upstream messages written, by the stream id the server's acknowledgement counts
    /// them under.
    private var written: [(streamID: Int32, messageID: String)] = []

    /// A connection whose login was written at `now`.
    init(heartbeat: Duration, openedAt now: ContinuousClock.Instant) {
        self.heartbeat = heartbeat
        openedAt = now
        lastInbound = now
        lastOutbound = now
    }

    /// Writes a frame the app asked for.
    mutating func write(_ frame: MCSFrame, now: ContinuousClock.Instant) -> Action {
        wrote(now)
        return .write(frame)
    }

    /// Writes an upstream message, to be reported sent once the server acknowledges it.
    mutating func write(upstream request: UpstreamRequest, now: ContinuousClock.Instant) -> Action {
        wrote(now)
        written.append((streamCount, request.messageID))
        return .write(MCSFrame.upstream(request))
    }

    /// A frame from the server.
    mutating func received(_ frame: MCSFrame, now: ContinuousClock.Instant) throws -> [Action] {
        lastInbound = now
        guard isLoggedIn else {
            guard frame.tag == .loginResponse else { throw Failure.unexpected(frame.tag) }
            let response = try frame.decode(as: McsProto_LoginResponse.self)
            if response.hasError {
                throw Failure.loginRefused(code: response.error.code, message: response.error.message)
            }
            isLoggedIn = true
            streamCount = 0
            written = []
            return [.loggedIn]
        }
        switch frame.tag {
        case .heartbeatPing:
            wrote(now)
            return [.write(try MCSFrame(.heartbeatAck, McsProto_HeartbeatAck()))]
        case .heartbeatAck:
            return acknowledged(upTo: try frame.decode(as: McsProto_HeartbeatAck.self).lastStreamIDReceived)
        case .iqStanza:
            return acknowledged(upTo: try frame.decode(as: McsProto_IqStanza.self).lastStreamIDReceived)
        case .dataMessageStanza:
            let stanza = try frame.decode(as: McsProto_DataMessageStanza.self)
            if stanza.appData.contains(where: { $0.key == "message_type" && $0.value == "send_error" }),
                let failed = stanza.appData.first(where: { $0.key == "google.message_id" })?.value
            {
                // Refused: it will not be reported sent.
                written.removeAll { $0.messageID == failed }
            }
            return [.receive(stanza)] + acknowledged(upTo: stanza.lastStreamIDReceived)
        case .close, .streamErrorStanza:
            return [.close]
        default:
            return []
        }
    }

    /// The clock's tick (about once a second): gives up a login that takes too long or a
    /// connection the server has been silent on for two heartbeats and ten seconds, and
    /// sends a heartbeat on a connection idle for one.
    mutating func tick(now: ContinuousClock.Instant) throws -> [Action] {
        if !isLoggedIn, now - openedAt > Self.loginTimeout { return [.close] }
        if now - lastInbound > heartbeat * 2 + .seconds(10) { return [.close] }
        guard isLoggedIn, now - lastOutbound >= heartbeat else { return [] }
        wrote(now)
        return [.write(try MCSFrame(.heartbeatPing, McsProto_HeartbeatPing()))]
    }

    /// Counts a stanza written.
    private mutating func wrote(_ now: ContinuousClock.Instant) {
        streamCount &+= 1
        lastOutbound = now
    }

    /// The server has every stanza up to `lastStreamID`: the upstream messages among them are sent.
    private mutating func acknowledged(upTo lastStreamID: Int32) -> [Action] {
        var sent: [Action] = []
        while let first = written.first, first.streamID <= lastStreamID {
            written.removeFirst()
            sent.append(.upstreamSent(messageID: first.messageID))
        }
        return sent
    }
}
