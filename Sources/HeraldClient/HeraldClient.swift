import Crypto
import Foundation
public import HeraldCore
import HeraldProtocol
public import Logging
import NIOCore
import NIOPosix
import NIOSSL
import SwiftProtobuf

/// The device SDK: registers an app instance with Herald, keeps its MCS connection up
/// (TLS, heartbeats, reconnects with jittered exponential backoff), and hands received
/// messages to the app once each, acknowledging them after the app has handled them.
///
/// Run `run()` in a task for as long as the app wants messages, and iterate `events`:
/// a message is acknowledged when the loop asks for the next one, so one that the app
/// did not finish handling is delivered again after a restart.
public actor HeraldClient {
    /// Where to register and connect, and how.
    public struct Configuration: Sendable {
        /// How the gateway connection is secured.
        public enum Trust: Sendable {
            /// TLS, trusting the CA certificate in this PEM file.
            case certificateAuthority(path: String)
            /// TLS, trusting the system's roots.
            case system
            /// No TLS.
            case plaintext
        }

        /// Herald's HTTP base URL, `http://` or `https://` (checked as the gateway's TLS is:
        /// against `certificateAuthority`'s CA when given, else the system's roots).
        public var server: String
        public var projectID: String
        public var apiKey: String
        public var appID: String
        public var platform: Platform
        public var gatewayHost: String
        public var gatewayPort: Int
        public var trust: Trust
        /// Where the identity is kept between runs; nil keeps it in memory only.
        public var identityPath: String?
        /// Seconds between heartbeats on an idle connection. Default 60.
        public var heartbeatSeconds: Int = 60
        /// First and largest reconnect delay, in seconds. Defaults 0.5 and 60.
        public var initialBackoffSeconds: Double = 0.5
        public var maximumBackoffSeconds: Double = 60
        /// On Apple platforms, the APNs device token iOS handed the app (hexadecimal) and
        /// whether it is for APNs' development environment: the app instance registers to be
        /// reached through APNs, its messages sealed for keys only it holds (SEMANTICS A5),
        /// which its Notification Service Extension opens with `SealedNotification.open`.
        public var apnsToken: String?
        public var apnsSandbox = false

        public init(
            server: String, projectID: String, apiKey: String, appID: String, platform: Platform = .android,
            gatewayHost: String, gatewayPort: Int = 5228, trust: Trust, identityPath: String? = nil
        ) {
            self.server = server
            self.projectID = projectID
            self.apiKey = apiKey
            self.appID = appID
            self.platform = platform
            self.gatewayHost = gatewayHost
            self.gatewayPort = gatewayPort
            self.trust = trust
            self.identityPath = identityPath
        }
    }

    /// Why the client stopped.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    public nonisolated let configuration: Configuration
    private let logger: Logger
    private var identity: DeviceIdentity?
    private let eventStream: AsyncStream<PendingEvent>
    private let eventContinuation: AsyncStream<PendingEvent>.Continuation
    private var handedOut: Set<String> = []
    private var connection: AsyncStream<Command>.Continuation?
    private var sslContext: NIOSSLContext?
    private let presenter: any NotificationPresenter
    /// Whether the app is in front of the user: a notification message then goes to the
    /// app itself instead of the tray.
    public private(set) var appState: AppState = .foreground
    /// Whether the device dozes: only high-priority messages arrive (SEMANTICS D4).
    public private(set) var isDozing = false
    /// Notifications shown in the tray whose data waits for the user to open them.
    private var tray: [String: PendingEvent] = [:]
    /// Upstream messages the server has not acknowledged yet, oldest first; sent again on
    /// every new connection until it does (the server keeps one copy of each id).
    private var outgoing: [UpstreamRequest] = []
    /// Events for the app, in order; iterate it once.
    public nonisolated var events: ClientEvents { ClientEvents(client: self, stream: eventStream) }

    public init(
        configuration: Configuration, presenter: any NotificationPresenter = NotificationTray(),
        logger: Logger = Logger(label: "herald.client")
    ) {
        self.configuration = configuration
        self.presenter = presenter
        self.logger = logger
        (eventStream, eventContinuation) = AsyncStream.makeStream(of: PendingEvent.self)
    }

    /// The registration token, once registered.
    public var token: String? { identity?.token }

    /// Whether an MCS connection is logged in.
    public var isConnected: Bool { connection != nil }

    // MARK: Registration

    /// Registers this app instance, or reuses the identity file when it matches the
    /// project and app; answers the registration token.
    @discardableResult
    public func register() async throws -> String {
        if identity == nil, let path = configuration.identityPath, let saved = try DeviceIdentity.load(from: path),
            saved.projectID == configuration.projectID, saved.appID == configuration.appID,
            saved.platform == configuration.platform.rawValue
        {
            identity = saved
        }
        if let identity { return identity.token }
        let registrar = try makeRegistrar()
        let (androidID, securityToken) = try await registrar.checkin(existing: nil)
        let installation = try await registrar.install(
            projectID: configuration.projectID, apiKey: configuration.apiKey, appID: configuration.appID)
        var made = DeviceIdentity(
            androidID: androidID, securityToken: securityToken, token: "", projectID: configuration.projectID,
            projectNumber: installation.projectNumber, appID: configuration.appID,
            platform: configuration.platform.rawValue, installationID: installation.fid)
        switch configuration.platform {
        case .apple where configuration.apnsToken != nil:
            let key = P256.KeyAgreement.PrivateKey()
            let auth = SecureRandom.bytes(16)
            made.token = try await registrar.registerApple(
                projectID: configuration.projectID, apiKey: configuration.apiKey,
                installationAuth: installation.authToken, apnsToken: configuration.apnsToken ?? "",
                sandbox: configuration.apnsSandbox, bundleID: configuration.appID,
                p256dh: Array(key.publicKey.x963Representation), auth: auth)
            made.webPrivateKey = Base64URL.encode(key.rawRepresentation)
            made.webAuthSecret = Base64URL.encode(auth)
        case .android, .apple:
            made.token = try await registrar.register3(
                androidID: androidID, securityToken: securityToken,
                fields: [
                    ("app", configuration.appID), ("device", String(androidID)), ("sender", installation.projectNumber),
                    ("X-platform", configuration.platform.rawValue), ("X-appid", installation.fid),
                    ("X-Goog-Firebase-Installations-Auth", installation.authToken),
                ])
        case .web:
            let channel = try await registrar.register3(
                androidID: androidID, securityToken: securityToken,
                fields: [
                    ("app", "org.herald.web"), ("device", String(androidID)),
                    ("sender", WebPushSubscription.keylessSender),
                    ("X-subtype", "wp:\(configuration.appID)#\(SecureRandom.hex(bytes: 8))"),
                ])
            let key = P256.KeyAgreement.PrivateKey()
            let auth = SecureRandom.bytes(16)
            made.token = try await registrar.registerWeb(
                projectID: configuration.projectID, apiKey: configuration.apiKey,
                installationAuth: installation.authToken, channelToken: channel,
                p256dh: Array(key.publicKey.x963Representation), auth: auth,
                device: (androidID, securityToken))
            made.webPrivateKey = Base64URL.encode(key.rawRepresentation)
            made.webAuthSecret = Base64URL.encode(auth)
        }
        identity = made
        try persist()
        logger.info("registered", metadata: ["token": "\(Registration.redacted(made.token))"])
        return made.token
    }

    /// Deletes this app instance's token (SEMANTICS L6): the server discards its pending
    /// messages and answers every later send with `UNREGISTERED`. The identity file is removed.
    public func deleteToken() async throws {
        guard let identity else { throw Failure(description: "not registered") }
        try await makeRegistrar().unregister(
            androidID: identity.androidID, securityToken: identity.securityToken, app: identity.appID,
            token: identity.token)
        self.identity = nil
        if let path = configuration.identityPath { try? FileManager.default.removeItem(atPath: path) }
        connection?.yield(.frame(MCSFrame(tag: .close, payload: [])))
    }

    /// The registrar for the configured server.
    private func makeRegistrar() throws -> DeviceRegistrar {
        var certificateAuthority: String?
        if case .certificateAuthority(let path) = configuration.trust { certificateAuthority = path }
        do {
            return try DeviceRegistrar(server: configuration.server, trusting: certificateAuthority)
        } catch {
            throw Failure(description: error.description)
        }
    }

    // MARK: App and device state

    /// Tells the SDK whether the app is in front of the user (SEMANTICS M4).
    public func setAppState(_ state: AppState) {
        appState = state
    }

    /// Tells the server the device dozes or woke up (SEMANTICS D4): while it dozes only
    /// high-priority messages are delivered; normal ones wait until it wakes.
    public func setDozing(_ dozing: Bool) {
        isDozing = dozing
        connection?.yield(.frame(MCSFrame.heraldExtension(MCSFrame.deviceStateExtension, dozing ? "doze" : "awake")))
    }

    /// The user tapped a notification in the tray: its message reaches the app, and the
    /// open is counted (SEMANTICS M4, L7). False when the tray holds no such notification.
    @discardableResult
    public func open(messageID: String) -> Bool {
        guard let pending = tray.removeValue(forKey: messageID) else { return false }
        connection?.yield(.frame(MCSFrame.heraldExtension(MCSFrame.receiptExtension, "opened \(messageID)")))
        eventContinuation.yield(PendingEvent(event: pending.event, persistentID: "", messageID: nil))
        return true
    }

    // MARK: Web Push

    /// Makes this device's Web Push subscription (once; later calls answer it): a push
    /// channel for `applicationServerKey` (senders must then sign with its VAPID key; without
    /// one any sender may post), its endpoint, and new keys that stay on the device.
    public func subscribeWebPush(applicationServerKey: String? = nil) async throws -> WebPushSubscription {
        guard var identity else { throw Failure(description: "not registered") }
        if let existing = identity.webPush, existing.applicationServerKey == applicationServerKey { return existing }
        let subtype = "wp:\(configuration.appID)#\(SecureRandom.hex(bytes: 8))"
        let token = try await makeRegistrar().register3(
            androidID: identity.androidID, securityToken: identity.securityToken,
            fields: [
                ("app", configuration.appID), ("device", String(identity.androidID)),
                ("sender", applicationServerKey ?? WebPushSubscription.keylessSender), ("X-subtype", subtype),
            ])
        let key = P256.KeyAgreement.PrivateKey()
        let subscription = WebPushSubscription(
            token: token, endpoint: configuration.server + "/wp/" + token, subtype: subtype,
            applicationServerKey: applicationServerKey,
            p256dh: Base64URL.encode(Array(key.publicKey.x963Representation)),
            auth: Base64URL.encode(SecureRandom.bytes(16)), privateKey: Base64URL.encode(key.rawRepresentation))
        identity.webPush = subscription
        self.identity = identity
        try persist()
        return subscription
    }

    /// Ends this device's Web Push subscription: Herald deletes its push channel, whose
    /// endpoint then answers senders 410 Gone, and the keys are forgotten. The app's own
    /// token stays registered.
    public func unsubscribeWebPush() async throws {
        guard var identity, let subscription = identity.webPush else { return }
        try await makeRegistrar().unregister(
            androidID: identity.androidID, securityToken: identity.securityToken, app: configuration.appID,
            subtype: subscription.subtype, sender: subscription.sender)
        identity.webPush = nil
        self.identity = identity
        try persist()
    }

    /// A push message to the subscription, decrypted; nil when it cannot be.
    private func pushMessage(_ stanza: McsProto_DataMessageStanza, subscription: WebPushSubscription) -> ClientEvent? {
        let appData = Dictionary(stanza.appData.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        // Not encrypted (a Matrix gateway's notification, say): the body as it came.
        guard let encoding = appData["content-encoding"] else {
            return .pushMessage(id: stanza.persistentID, payload: Array(stanza.rawData))
        }
        guard let coding = WebPushEncryption.Coding(rawValue: encoding),
            let key = Base64URL.decode(subscription.privateKey),
            let privateKey = try? P256.KeyAgreement.PrivateKey(rawRepresentation: key),
            let auth = Base64URL.decode(subscription.auth),
            let plaintext = try? WebPushEncryption.open(
                Array(stanza.rawData), receiverKey: privateKey, authSecret: auth, coding: coding,
                senderPublicKey: appData["crypto-key"].flatMap { VAPID.parameter("dh", in: $0) }.flatMap(
                    Base64URL.decode),
                salt: appData["encryption"].flatMap { VAPID.parameter("salt", in: $0) }.flatMap(Base64URL.decode))
        else { return nil }
        return .pushMessage(id: stanza.persistentID, payload: plaintext)
    }

    // MARK: Upstream

    /// Sends a message to the project's app servers (over XMPP): `sent` follows when the
    /// server has it, `sendError` if it is refused or no app server takes it within
    /// `ttlSeconds` (default a day). Sent again after a reconnect until the server has it.
    public func sendUpstream(messageID: String, data: [String: String], ttlSeconds: Int64? = nil) throws {
        guard let identity else { throw Failure(description: "not registered") }
        let request = UpstreamRequest(
            messageID: messageID, to: "\(identity.projectNumber)@\(UpstreamRequest.domain)",
            category: identity.appID, token: identity.token, ttlSeconds: ttlSeconds, data: data)
        outgoing.append(request)
        connection?.yield(.upstream(request))
    }

    /// The server has the upstream message: it is sent.
    private func upstreamSent(_ messageID: String) {
        guard let index = outgoing.firstIndex(where: { $0.messageID == messageID }) else { return }
        outgoing.remove(at: index)
        eventContinuation.yield(PendingEvent(event: .sent(messageID: messageID), persistentID: "", messageID: nil))
    }

    /// The server refused an upstream message or dropped it unsent.
    private func sendFailed(_ stanza: McsProto_DataMessageStanza) {
        let value = { (key: String) in stanza.appData.first { $0.key == key }?.value ?? "" }
        let messageID = value("google.message_id")
        outgoing.removeAll { $0.messageID == messageID }
        let event = PendingEvent(
            event: .sendError(messageID: messageID, reason: value("error")), persistentID: stanza.persistentID)
        // A refusal on the connection has no persistent id and needs no acknowledgement.
        if stanza.persistentID.isEmpty { eventContinuation.yield(event) } else { deliver(event) }
    }

    // MARK: Connection

    /// Keeps the MCS connection up until the task is cancelled, reconnecting with
    /// jittered exponential backoff. Registers first if needed.
    public func run() async throws {
        try await register()
        var delay = configuration.initialBackoffSeconds
        while !Task.isCancelled {
            var loggedIn = false
            var reason = "closed by the server"
            do {
                try await connectOnce {
                    delay = self.configuration.initialBackoffSeconds
                    loggedIn = true
                }
            } catch is CancellationError {
                return
            } catch let failure as Failure {
                throw failure
            } catch {
                logger.debug("connection ended", metadata: ["error": "\(error)"])
                reason = ConnectionFailure.reason(error)
            }
            connection = nil
            guard !Task.isCancelled else { return }
            let jittered = delay * Double.random(in: 0.5...1.5)
            // Told to the app, so that a device that cannot reach its gateway says why.
            eventContinuation.yield(
                PendingEvent(
                    event: .disconnected(
                        ConnectionFailure(
                            gateway: "\(configuration.gatewayHost):\(configuration.gatewayPort)", loggedIn: loggedIn,
                            reason: reason, retryInSeconds: jittered)),
                    persistentID: "", messageID: nil))
            try? await Task.sleep(for: .milliseconds(Int(jittered * 1000)))
            delay = min(delay * 2, configuration.maximumBackoffSeconds)
        }
    }

    enum Command: Sendable {
        case frame(MCSFrame)
        case upstream(UpstreamRequest)
        case inbound(MCSFrame)
        /// The connection's frames ended: cleanly, or with the connection's error.
        case inboundEnded((any Error)?)
        case tick
    }

    /// One connection: log in, then read frames, answer heartbeats and send acks until it ends.
    private func connectOnce(onLoggedIn: () -> Void) async throws {
        guard let identity else { throw Failure(description: "not registered") }
        let channel = try await openChannel()
        try await channel.executeThenClose { inbound, outbound in
            let (commands, continuation) = AsyncStream.makeStream(of: Command.self)
            defer { continuation.finish() }
            do {
                try await outbound.write(loginRequest(identity))
            } catch {
                // Closed before the login went out: why it closed (a TLS failure) is the
                // inbound side's error, not the write's.
                for try await _ in inbound {}
                throw error
            }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    do {
                        for try await frame in inbound { continuation.yield(.inbound(frame)) }
                        continuation.yield(.inboundEnded(nil))
                    } catch {
                        continuation.yield(.inboundEnded(error))
                    }
                }
                group.addTask {
                    while !Task.isCancelled {
                        try await Task.sleep(for: .seconds(1))
                        continuation.yield(.tick)
                    }
                }
                let clock = ContinuousClock()
                var session = MCSClientSession(
                    heartbeat: .seconds(configuration.heartbeatSeconds), openedAt: clock.now)
                defer { group.cancelAll() }
                loop: for await command in commands {
                    let actions: [MCSClientSession.Action]
                    switch command {
                    case .frame(let frame):
                        actions = [session.write(frame, now: clock.now)]
                    case .upstream(let request):
                        guard outgoing.contains(where: { $0.messageID == request.messageID }) else { continue }
                        actions = [session.write(upstream: request, now: clock.now)]
                    case .inbound(let frame):
                        do {
                            actions = try session.received(frame, now: clock.now)
                        } catch MCSClientSession.Failure.loginRefused(let code, let message) {
                            throw Failure(description: "login refused: \(code) \(message)")
                        }
                    case .inboundEnded(let error):
                        // A connection that failed says why (a TLS failure, a broken frame),
                        // not that the server closed it.
                        if let error { throw error }
                        break loop
                    case .tick:
                        actions = try session.tick(now: clock.now)
                    }
                    for action in actions {
                        switch action {
                        case .write(let frame):
                            try await outbound.write(frame)
                        case .loggedIn:
                            onLoggedIn()
                            self.identity?.unacknowledgedIDs = []
                            try? persist()
                            connection = continuation
                            if isDozing {
                                continuation.yield(
                                    .frame(MCSFrame.heraldExtension(MCSFrame.deviceStateExtension, "doze")))
                            }
                            for request in outgoing { continuation.yield(.upstream(request)) }
                        case .receive(let stanza):
                            await receive(stanza)
                        case .upstreamSent(let messageID):
                            upstreamSent(messageID)
                        case .close:
                            break loop
                        }
                    }
                }
            }
        }
    }

    private func openChannel() async throws -> NIOAsyncChannel<MCSFrame, MCSFrame> {
        var tls: NIOSSLContext?
        switch configuration.trust {
        case .plaintext:
            tls = nil
        case .system:
            if sslContext == nil { sslContext = try MCSClientChannel.tlsContext(trusting: nil) }
            tls = sslContext
        case .certificateAuthority(let path):
            if sslContext == nil { sslContext = try MCSClientChannel.tlsContext(trusting: path) }
            tls = sslContext
        }
        return try await MCSClientChannel.connect(
            host: configuration.gatewayHost, port: configuration.gatewayPort, tls: tls)
    }

    private func loginRequest(_ identity: DeviceIdentity) -> MCSFrame {
        MCSFrame.login(
            androidID: identity.androidID, securityToken: identity.securityToken,
            receivedPersistentIDs: identity.unacknowledgedIDs, heartbeatSeconds: configuration.heartbeatSeconds)
    }

    // MARK: Receiving and acknowledging

    /// An event and what acknowledging it takes.
    struct PendingEvent: Sendable {
        var event: ClientEvent
        var persistentID: String
        var messageID: String?
    }

    private func receive(_ stanza: McsProto_DataMessageStanza) async {
        guard let identity else { return }
        if stanza.appData.first(where: { $0.key == "message_type" })?.value == "send_error" {
            sendFailed(stanza)
            return
        }
        if let subscription = identity.webPush,
            stanza.appData.contains(where: { $0.key == "subtype" && $0.value == subscription.subtype })
        {
            // Seen before (its acknowledgement was lost with the connection): acknowledge only.
            guard !identity.handledMessageIDs.contains(stanza.persistentID),
                let event = pushMessage(stanza, subscription: subscription)
            else {
                acknowledge(persistentID: stanza.persistentID)
                return
            }
            deliver(PendingEvent(event: event, persistentID: stanza.persistentID, messageID: stanza.persistentID))
            return
        }
        if stanza.appData.first(where: { $0.key == "message_type" })?.value == "deleted_messages" {
            let count = Int(stanza.appData.first { $0.key == "total_deleted" }?.value ?? "") ?? 0
            deliver(PendingEvent(event: .deletedMessages(count: count), persistentID: stanza.persistentID))
            return
        }
        guard let message = MessageDecoding.remoteMessage(from: stanza, identity: identity) else {
            logger.warning("undecodable message dropped", metadata: ["id": "\(stanza.persistentID)"])
            acknowledge(persistentID: stanza.persistentID)
            return
        }
        // Seen before (delivered again after a reconnect or restart): acknowledge only.
        if identity.handledMessageIDs.contains(message.messageID) {
            acknowledge(persistentID: stanza.persistentID)
            return
        }
        let pending = PendingEvent(
            event: .message(message), persistentID: stanza.persistentID, messageID: message.messageID)
        // SEMANTICS M4: in the background a notification goes to the tray; its data waits for the user.
        if appState == .background, let notification = message.notification {
            guard handedOut.insert(stanza.persistentID).inserted else { return }
            tray[message.messageID] = pending
            let presented = PresentedNotification(messageID: message.messageID, fields: notification)
            await presenter.present(presented)
            connection?.yield(
                .frame(MCSFrame.heraldExtension(MCSFrame.receiptExtension, "impression \(message.messageID)")))
            handled(pending)
            return
        }
        deliver(pending)
    }

    private func deliver(_ event: PendingEvent) {
        guard handedOut.insert(event.persistentID).inserted else { return }
        eventContinuation.yield(event)
    }

    /// Called when the app has finished with an event.
    func handled(_ event: PendingEvent) {
        guard !event.persistentID.isEmpty else { return }
        handedOut.remove(event.persistentID)
        if let messageID = event.messageID {
            identity?.handledMessageIDs.append(messageID)
            if let count = identity?.handledMessageIDs.count, count > DeviceIdentity.handledLimit {
                identity?.handledMessageIDs.removeFirst(count - DeviceIdentity.handledLimit)
            }
        }
        acknowledge(persistentID: event.persistentID)
    }

    private func acknowledge(persistentID: String) {
        if let connection {
            connection.yield(.frame(MCSFrame.selectiveAck([persistentID])))
        } else {
            identity?.unacknowledgedIDs.append(persistentID)
        }
        try? persist()
    }

    private func persist() throws {
        guard let path = configuration.identityPath, let identity else { return }
        try identity.save(to: path)
    }
}
