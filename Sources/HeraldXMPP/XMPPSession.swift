public import HeraldCore

/// One app server's XMPP connection (reference §6), as a pure state machine: it takes the
/// stream's events and the outcomes of the work it asked for, and returns what to do.
///
/// The stream goes: the app server opens it; Herald offers SASL PLAIN; the app server
/// authenticates as `<sender id>@fcm.googleapis.com` with the server key; both restart
/// the stream; the app server binds a resource; then each `<message>` carries a JSON
/// downstream message, answered by an `ack` or a `nack`. At most `maximumPending` may wait
/// for their answer; one more is refused, not buffered. Draining tells the app server to
/// open another connection, refuses new messages and closes once the waiting ones are answered.
public struct XMPPSession: Sendable {
    public enum Phase: Sendable, Equatable {
        case awaitingStream, awaitingAuthentication, authenticating, awaitingRestart, awaitingBind, established
        case draining, closed
    }

    /// What the connection does for the session.
    public enum Action: Sendable, Equatable {
        /// Writes XML text to the app server.
        case write(String)
        /// Checks the credentials; the outcome goes to `authenticated(_:)`.
        case authenticate(senderID: Int64, serverKey: String)
        /// Starts a new stream: the parser forgets the old one.
        case restartStream
        /// Accepts a downstream message; the outcome goes to `answered(_:error:)`.
        case send(XMPPDownstream)
        /// The app server acknowledged an upstream message or a receipt: it is deleted.
        case acknowledgeUpstream(messageID: String, token: String?)
        case close
    }

    /// What the credential check found.
    public enum Authentication: Sendable, Equatable {
        case accepted
        case refused
        /// Right credentials, but the project has too many connections (SEMANTICS T5).
        case overLimit
    }

    public static let domain = "fcm.googleapis.com"
    /// The domains app servers name themselves at.
    static let domains: Set<String> = ["fcm.googleapis.com", "gcm.googleapis.com"]
    /// The most downstream messages waiting for their ack or nack on one connection.
    public static let maximumPending = 100
    /// Failed authentications before the connection is closed.
    static let maximumAuthenticationAttempts = 3

    static let streamNamespace = "http://etherx.jabber.org/streams"
    static let saslNamespace = "urn:ietf:params:xml:ns:xmpp-sasl"
    static let bindNamespace = "urn:ietf:params:xml:ns:xmpp-bind"
    static let sessionNamespace = "urn:ietf:params:xml:ns:xmpp-session"
    static let stanzasNamespace = "urn:ietf:params:xml:ns:xmpp-stanzas"
    static let gcmNamespace = "google:mobile:data"

    public private(set) var phase: Phase = .awaitingStream
    /// The sender id that authenticated.
    public private(set) var senderID: Int64?
    /// The message ids of downstream messages waiting for their answer.
    private var pending: Set<String> = []
    /// The message ids of upstream messages and receipts sent and not yet acknowledged.
    private var upstreamPending: Set<String> = []
    private var authenticationAttempts = 0
    private let streamID: String

    public init(streamID: String) {
        self.streamID = streamID
    }

    public var pendingCount: Int { pending.count }

    /// How many more upstream messages and receipts the connection takes now: at most
    /// `maximumPending` wait for the app server's acknowledgement, and only an established
    /// connection (not a draining one) takes any.
    public var upstreamRoom: Int {
        phase == .established ? max(0, Self.maximumPending - upstreamPending.count) : 0
    }

    /// Sends upstream messages and receipts leased for this connection. One sent before and
    /// not acknowledged (its lease ran out) is sent again.
    public mutating func offer(_ messages: [UpstreamMessage]) -> [Action] {
        guard phase == .established else { return [] }
        return messages.map { message in
            upstreamPending.insert(message.messageID)
            return .write(Self.gcm(message.appServerJSON))
        }
    }

    public mutating func received(_ event: XMPPStreamParser.Event) -> [Action] {
        switch (event, phase) {
        case (_, .closed):
            return []
        case (.streamOpened, .awaitingStream):
            phase = .awaitingAuthentication
            return [
                .write(
                    streamHeader + "<stream:features><mechanisms xmlns=\"\(Self.saslNamespace)\">"
                        + "<mechanism>PLAIN</mechanism></mechanisms></stream:features>")
            ]
        case (.streamOpened, .awaitingRestart):
            phase = .awaitingBind
            return [.write(streamHeader + "<stream:features><bind xmlns=\"\(Self.bindNamespace)\"/></stream:features>")]
        case (.streamOpened, _):
            return streamError("invalid-xml")
        case (.whitespace, _):
            return []
        case (.streamClosed, _):
            phase = .closed
            return [.write("</stream:stream>"), .close]
        case (.stanza(let stanza), .awaitingAuthentication):
            return authenticate(stanza)
        case (.stanza(let stanza), .awaitingBind), (.stanza(let stanza), .established),
            (.stanza(let stanza), .draining):
            return handle(stanza)
        case (.stanza, _):
            return streamError("not-authorized")
        }
    }

    /// The credential check's outcome.
    public mutating func authenticated(_ outcome: Authentication) -> [Action] {
        guard phase == .authenticating else { return [] }
        switch outcome {
        case .accepted:
            phase = .awaitingRestart
            return [.write("<success xmlns=\"\(Self.saslNamespace)\"/>"), .restartStream]
        case .refused:
            return saslFailure("not-authorized", "The sender id and server key do not match a project.")
        case .overLimit:
            return saslFailure(
                "temporary-auth-failure", "The project has too many XMPP connections; retry later.", closing: true)
        }
    }

    /// The outcome of accepting a downstream message: an `ack`, or a `nack` with the error.
    public mutating func answered(_ message: XMPPDownstream, error: HeraldError?) -> [Action] {
        guard pending.remove(message.messageID) != nil, phase != .closed else { return [] }
        var actions: [Action]
        if let error {
            actions = [nack(message.messageID, recipient: message.recipient, code: error.xmppCode, error.message)]
        } else {
            actions = [
                .write(
                    Self.gcm(
                        .object([
                            ("message_type", .string("ack")), ("from", .string(message.recipient)),
                            ("message_id", .string(message.messageID)),
                        ])))
            ]
        }
        if phase == .draining && pending.isEmpty { actions += finish() }
        return actions
    }

    /// The node stops: tell the app server to connect again elsewhere, answer what waits,
    /// then close.
    public mutating func drain() -> [Action] {
        switch phase {
        case .established, .awaitingBind:
            phase = .draining
            let control = Self.gcm(
                .object([("message_type", .string("control")), ("control_type", .string("CONNECTION_DRAINING"))]))
            return [.write(control)] + (pending.isEmpty ? finish() : [])
        case .draining, .closed:
            return []
        default:
            return finish()
        }
    }

    /// The stream broke (not well-formed, too big): a stream error, then the connection ends.
    public mutating func failed() -> [Action] {
        guard phase != .closed else { return [] }
        return streamError("not-well-formed")
    }

    /// The app server did not authenticate and bind in time.
    public mutating func timedOut() -> [Action] {
        switch phase {
        case .established, .draining, .closed: return []
        default: return streamError("connection-timeout")
        }
    }

    // MARK: Stages

    private var streamHeader: String {
        "<stream:stream from=\"\(Self.domain)\" id=\"\(streamID)\" version=\"1.0\" xmlns=\"jabber:client\" "
            + "xmlns:stream=\"\(Self.streamNamespace)\">"
    }

    private mutating func authenticate(_ stanza: XMPPElement) -> [Action] {
        guard stanza.localName == "auth" else { return streamError("not-authorized") }
        guard stanza.attribute("mechanism") == "PLAIN" else {
            return saslFailure("invalid-mechanism", "Only PLAIN is offered.")
        }
        // authzid NUL authcid NUL password (RFC 4616).
        guard let decoded = Base64URL.decode(stanza.text.filter { !$0.isWhitespace }),
            case let parts = decoded.split(separator: 0, omittingEmptySubsequences: false), parts.count == 3,
            let user = String(validating: parts[1], as: UTF8.self),
            let key = String(validating: parts[2], as: UTF8.self)
        else { return saslFailure("malformed-request", "The PLAIN response is not authzid, user and password.") }
        let userParts = user.split(separator: "@", maxSplits: 1)
        guard let senderID = userParts.first.flatMap({ Int64($0) }),
            userParts.count == 1 || Self.domains.contains(String(userParts[1]))
        else { return saslFailure("not-authorized", "The user is <sender id>@\(Self.domain).") }
        phase = .authenticating
        self.senderID = senderID
        return [.authenticate(senderID: senderID, serverKey: key)]
    }

    private mutating func handle(_ stanza: XMPPElement) -> [Action] {
        switch stanza.localName {
        case "iq": return iq(stanza)
        case "message" where phase == .awaitingBind: return streamError("not-authorized")
        case "message": return message(stanza)
        case "presence": return []
        default: return streamError("unsupported-stanza-type")
        }
    }

    private mutating func iq(_ stanza: XMPPElement) -> [Action] {
        let id = XMPPElement.escaped(stanza.attribute("id") ?? "", quotes: true)
        guard ["get", "set"].contains(stanza.attribute("type") ?? "") else { return [] }
        if let bind = stanza.child("bind"), phase == .awaitingBind, let senderID {
            let resource = bind.child("resource")?.text ?? ""
            phase = .established
            let jid = "\(senderID)@\(Self.domain)/" + (resource.isEmpty ? streamID : resource)
            return [
                .write(
                    "<iq type=\"result\" id=\"\(id)\"><bind xmlns=\"\(Self.bindNamespace)\"><jid>"
                        + XMPPElement.escaped(jid, quotes: false) + "</jid></bind></iq>")
            ]
        }
        if stanza.child("session") != nil || stanza.child("ping") != nil {
            return [.write("<iq type=\"result\" id=\"\(id)\"/>")]
        }
        return [
            .write(
                "<iq type=\"error\" id=\"\(id)\"><error type=\"cancel\"><feature-not-implemented "
                    + "xmlns=\"\(Self.stanzasNamespace)\"/></error></iq>")
        ]
    }

    private mutating func message(_ stanza: XMPPElement) -> [Action] {
        guard let gcm = stanza.child("gcm"), let json = try? JSONParser.parse(Array(gcm.text.utf8)),
            let messageID = json["message_id"]?.stringValue, !messageID.isEmpty
        else { return [stanzaError(stanza, "The message needs a gcm element holding JSON with a message_id.")] }
        let recipient = json["to"]?.stringValue ?? json["condition"]?.stringValue ?? ""
        if let type = json["message_type"]?.stringValue {
            switch type {
            case "ack":
                upstreamPending.remove(messageID)
                return [.acknowledgeUpstream(messageID: messageID, token: json["to"]?.stringValue)]
            case "nack":
                // Refused by the app server: sent again once its lease runs out.
                upstreamPending.remove(messageID)
                return []
            default:
                return [nack(messageID, recipient: recipient, code: "INVALID_JSON", "Unknown message_type \(type).")]
            }
        }
        guard phase == .established else {
            return [
                nack(
                    messageID, recipient: recipient, code: "CONNECTION_DRAINING",
                    "The connection is draining; send on a new one.")
            ]
        }
        guard pending.count < Self.maximumPending else {
            return [
                nack(
                    messageID, recipient: recipient, code: "SERVICE_UNAVAILABLE",
                    "\(Self.maximumPending) messages already wait for their ack on this connection.")
            ]
        }
        guard !pending.contains(messageID) else {
            return [nack(messageID, recipient: recipient, code: "INVALID_JSON", "The message_id is already in use.")]
        }
        guard json["registration_ids"] == nil else {
            return [
                nack(
                    messageID, recipient: recipient, code: "INVALID_JSON", "An XMPP message has one recipient: use to.")
            ]
        }
        let request: LegacySendRequest
        do {
            request = try LegacySendRequest.decode(document: json)
        } catch {
            return [nack(messageID, recipient: recipient, code: "INVALID_JSON", error.description)]
        }
        let target: (field: String, value: String)
        switch request.audience {
        case .registrations(let tokens): target = ("token", tokens[0])
        case .topic(let name): target = ("topic", name)
        case .condition(let condition): target = ("condition", condition)
        case .missing:
            return [nack(messageID, recipient: recipient, code: "BAD_REGISTRATION", "The message has no to.")]
        }
        pending.insert(messageID)
        return [
            .send(
                XMPPDownstream(
                    messageID: messageID, recipient: recipient, target: target, request: request,
                    receiptRequested: json["delivery_receipt_requested"]?.boolValue ?? false))
        ]
    }

    // MARK: Answers

    /// A JSON payload in its `<message><gcm>` envelope.
    static func gcm(_ json: JSONValue) -> String {
        "<message id=\"\"><gcm xmlns=\"\(gcmNamespace)\">" + XMPPElement.escaped(json.rendered, quotes: false)
            + "</gcm></message>"
    }

    private func nack(_ messageID: String, recipient: String, code: String, _ description: String) -> Action {
        .write(
            Self.gcm(
                .object([
                    ("message_type", .string("nack")), ("from", .string(recipient)), ("message_id", .string(messageID)),
                    ("error", .string(code)), ("error_description", .string(description)),
                ])))
    }

    private func stanzaError(_ stanza: XMPPElement, _ text: String) -> Action {
        let id = XMPPElement.escaped(stanza.attribute("id") ?? "", quotes: true)
        return .write(
            "<message id=\"\(id)\" type=\"error\"><error code=\"400\" type=\"modify\"><bad-request "
                + "xmlns=\"\(Self.stanzasNamespace)\"/><text xmlns=\"\(Self.stanzasNamespace)\">"
                + XMPPElement.escaped(text, quotes: false) + "</text></error></message>")
    }

    /// A failed authentication: the app server may try again, up to `maximumAuthenticationAttempts`
    /// in all, unless `closing` (RFC 6120 §6.4.5).
    private mutating func saslFailure(_ condition: String, _ text: String, closing: Bool = false) -> [Action] {
        authenticationAttempts += 1
        let failure = [
            Action.write(
                "<failure xmlns=\"\(Self.saslNamespace)\"><\(condition)/><text>"
                    + XMPPElement.escaped(text, quotes: false)
                    + "</text></failure>")
        ]
        guard closing || authenticationAttempts >= Self.maximumAuthenticationAttempts else {
            phase = .awaitingAuthentication
            return failure
        }
        return failure + finish()
    }

    private mutating func streamError(_ condition: String) -> [Action] {
        let header = phase == .awaitingStream ? streamHeader : ""
        phase = .closed
        return [
            .write(
                header + "<stream:error><\(condition) xmlns=\"urn:ietf:params:xml:ns:xmpp-streams\"/></stream:error>"
                    + "</stream:stream>"),
            .close,
        ]
    }

    private mutating func finish() -> [Action] {
        phase = .closed
        return [.write("</stream:stream>"), .close]
    }
}
