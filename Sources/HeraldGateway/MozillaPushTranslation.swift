import Foundation
import HeraldCore
import HeraldProtocol

/// One connection of Mozilla's push protocol (Firefox, Sunup), told in MCS to the session
/// that serves every device connection (`MCSSession`): `hello` becomes the device's login,
/// `ack` a selective acknowledgement, `{}` a heartbeat, and what the session sends becomes
/// `hello`, `notification` and `{}` replies. So a browser speaking this protocol gets the
/// same delivery rules as every MCS device (SEMANTICS D, L, N, W6). What MCS has no word for
/// (`register`, `unregister`) the handler does in the store. A value: events in, actions out.
struct MozillaPushTranslation: Sendable {
    enum Action: Sendable, Equatable {
        case toSession(MCSFrame)
        case toClient(String)
        /// A WebSocket ping, the protocol's server heartbeat.
        case pingClient
        /// Find the device `uaid` names, or make one: answered by `identified`.
        case identify(uaid: String?)
        /// Make or find the channel's registration on the logged-in device: answered by
        /// `registered`.
        case register(channelID: String, key: String?, androidID: UInt64)
        /// Delete the channel's registration: answered by `unregistered`.
        case unregister(channelID: String, androidID: UInt64)
        /// Ends the connection with a WebSocket close code.
        case close(code: UInt16, reason: String)
    }

    private enum Phase: Equatable {
        case awaitingHello
        case identifying
        case loggingIn(androidID: UInt64, securityToken: UInt64)
        case ready(androidID: UInt64, securityToken: UInt64)
        case closed
    }

    /// The most `register` and `unregister` messages one connection may send a minute.
    static let registrationsPerMinute = 60
    /// The shortest time between two of a client's pings (autopush's rule).
    static let minimumPingSeconds: Int64 = 45
    /// The heartbeat the session is asked for: the server pings an idle client this often.
    static let heartbeatSeconds = 300

    /// WebSocket close codes (RFC 6455 §7.4.1).
    static let goingAway: UInt16 = 1001
    static let protocolError: UInt16 = 1002
    static let policyViolation: UInt16 = 1008

    private var phase = Phase.awaitingHello
    private var registrations = MinuteAllowance(limit: registrationsPerMinute)
    private var lastPing: Timestamp?

    /// The `uaid` of a session that said `hello`.
    var uaid: String? {
        switch phase {
        case .loggingIn(let androidID, let securityToken), .ready(let androidID, let securityToken):
            MozillaPushUAID.make(androidID: androidID, securityToken: securityToken)
        default: nil
        }
    }

    /// A text frame from the client.
    mutating func received(_ text: [UInt8], now: Timestamp) -> [Action] {
        guard phase != .closed else { return [] }
        let message: MozillaPushMessage
        do {
            message = try MozillaPushMessage.parse(text)
        } catch {
            return fail(Self.protocolError, error.description)
        }
        if case .hello(let uaid) = message {
            guard phase == .awaitingHello else { return fail(Self.protocolError, "a second hello") }
            phase = .identifying
            return [.identify(uaid: uaid)]
        }
        guard case .ready(let androidID, _) = phase else {
            return fail(Self.protocolError, "expected messageType=\"hello\"")
        }
        switch message {
        case .hello: return []
        case .register(let channelID, let key):
            guard registrations.admit(now: now) else { return fail(Self.policyViolation, "too many registrations") }
            return [.register(channelID: channelID, key: key, androidID: androidID)]
        case .unregister(let channelID):
            guard registrations.admit(now: now) else { return fail(Self.policyViolation, "too many registrations") }
            return [.unregister(channelID: channelID, androidID: androidID)]
        case .ack(let versions):
            return versions.isEmpty ? [] : [.toSession(.selectiveAck(versions))]
        case .nack, .broadcastSubscribe:
            // A message the client could not take stays in flight until the next connection.
            return []
        case .ping:
            if let lastPing, now.milliseconds - lastPing.milliseconds < Self.minimumPingSeconds * 1000 {
                return fail(Self.policyViolation, "pings too often")
            }
            lastPing = now
            return [.toSession(MCSFrame(tag: .heartbeatPing, payload: []))]
        }
    }

    /// The client answered the server's WebSocket ping.
    mutating func receivedPong() -> [Action] {
        guard case .ready = phase else { return [] }
        return [.toSession(MCSFrame(tag: .heartbeatAck, payload: []))]
    }

    /// The device the client's `hello` names (a new one when it named none of ours): it logs in.
    mutating func identified(androidID: UInt64, securityToken: UInt64) -> [Action] {
        guard phase == .identifying else { return [] }
        phase = .loggingIn(androidID: androidID, securityToken: securityToken)
        return [
            .toSession(
                .login(
                    androidID: androidID, securityToken: securityToken, heartbeatSeconds: Self.heartbeatSeconds,
                    clientID: "mozilla-push"))
        ]
    }

    /// A channel was registered (its endpoint) or refused (nil, with the status).
    mutating func registered(channelID: String, endpoint: String?, status: Int) -> [Action] {
        guard case .ready = phase else { return [] }
        return [
            .toClient(MozillaPushReply.register(channelID: channelID, status: status, pushEndpoint: endpoint ?? ""))
        ]
    }

    mutating func unregistered(channelID: String) -> [Action] {
        guard case .ready = phase else { return [] }
        return [.toClient(MozillaPushReply.unregister(channelID: channelID, status: 200))]
    }

    /// The session sent a frame to the device.
    mutating func fromSession(_ frame: MCSFrame) -> [Action] {
        switch (frame.tag, phase) {
        case (.loginResponse, .loggingIn(let androidID, let securityToken)):
            guard let response = try? frame.decode(as: McsProto_LoginResponse.self), !response.hasError else {
                return fail(Self.policyViolation, "the device was refused")
            }
            phase = .ready(androidID: androidID, securityToken: securityToken)
            return [.toClient(MozillaPushReply.hello(uaid: uaid ?? ""))]
        case (.dataMessageStanza, .ready):
            guard let stanza = try? frame.decode(as: McsProto_DataMessageStanza.self) else { return [] }
            let data = Dictionary(stanza.appData.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
            guard let channelID = data["subtype"], MozillaPushMessage.isChannelID(channelID) else {
                // Nothing the protocol can carry (a "messages deleted" signal): taken as read.
                return [.toSession(.selectiveAck([stanza.persistentID]))]
            }
            return [
                .toClient(
                    MozillaPushReply.notification(
                        channelID: channelID, version: stanza.persistentID, body: Array(stanza.rawData),
                        encoding: data["content-encoding"], cryptoKey: data["crypto-key"],
                        encryption: data["encryption"]))
            ]
        case (.heartbeatPing, .ready):
            return [.pingClient]
        case (.heartbeatAck, .ready):
            return [.toClient(MozillaPushReply.ping)]
        case (.close, _):
            // The server is stopping: the client reconnects elsewhere or later.
            return fail(Self.goingAway, "the server is stopping")
        default:
            return []
        }
    }

    /// The connection ended.
    mutating func closed() { phase = .closed }

    private mutating func fail(_ code: UInt16, _ reason: String) -> [Action] {
        phase = .closed
        return [.close(code: code, reason: reason)]
    }
}
