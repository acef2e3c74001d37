public import HeraldCore
public import HeraldProtocol
import SwiftProtobuf

/// One device connection's protocol state: a value that takes events (frames, login
/// results, loaded queue pages, wake-ups, clock ticks) and answers actions for the
/// connection handler to carry out. It does no I/O, so it is tested without sockets.
public struct MCSSession: Sendable {
    /// What the connection handler must do.
    public enum Action: Sendable, Equatable {
        /// Write a frame.
        case send(MCSFrame)
        /// Check a login's android id and security token; answer with `authenticated`.
        case authenticate(androidID: UInt64, securityToken: UInt64)
        /// Remove acknowledged messages from the device's queue.
        case acknowledge([String])
        /// Read up to `limit` queued messages after a sequence number (only high-priority
        /// ones when the device dozes); answer with `loaded`.
        case loadPending(after: Int64, limit: Int, highPriorityOnly: Bool)
        /// Count what the user saw of a message (SEMANTICS L7).
        case recordReceipt(DeliveryCounter, messageID: String)
        /// Delete one of the device's registrations (SEMANTICS L6).
        case unregister(token: String)
        /// Keep an upstream message for the app servers; answer with `upstreamHandled`.
        case upstream(UpstreamRequest)
        /// Tell the delivery path the session sent a message offered while its row is written.
        case tookOffer(persistentID: String)
        /// Tell the delivery path the session did not send an offered message: it is read
        /// from the queue once written, like any other.
        case declinedOffer(persistentID: String)
        /// Close the connection.
        case close(reason: String)
    }

    enum Phase: Sendable, Equatable {
        case awaitingLogin
        case authenticating
        case established(androidID: UInt64)
        case closed
    }

    private let configuration: GatewayConfiguration
    private(set) var phase: Phase = .awaitingLogin
    private var login: McsProto_LoginRequest?
    private let openedAt: Timestamp
    private var lastInbound: Timestamp
    private var lastOutbound: Timestamp
    private var heartbeatSeconds: Int
    /// Stanzas received from the device, which its `last_stream_id_received` counts.
    private var inboundCount: Int32 = 0
    /// Heartbeat pings since the last clock tick (a second).
    private var pingsSinceTick = 0
    /// Heartbeat pings a device may send between two clock ticks.
    public static let maximumPingsPerTick = 20
    /// Stanzas sent to the device.
    private var outboundCount: Int32 = 0
    /// Receipts (impressions and opens) a device may send a minute: two for each message
    /// SEMANTICS T6 lets it receive by default. More are dropped unread, so a flood of
    /// receipts costs the store nothing.
    public static let maximumReceiptsPerMinute = 480
    private var receipts = MinuteAllowance(limit: maximumReceiptsPerMinute)
    /// Acknowledged ids a device may name in a minute that its session does not hold in
    /// flight (SEMANTICS N3): they are dropped in the session, and a device naming more is
    /// cut off. A device acknowledges what it was sent, so it names such ids only when an
    /// acknowledgement crosses a reconnection: a few, never a thousand.
    public static let maximumStrayAcknowledgementsPerMinute = 1_000
    private var strayAcknowledgements = MinuteAllowance(limit: maximumStrayAcknowledgementsPerMinute)
    /// Ids of a login's `received_persistent_id` that are acknowledged (N3): the newest, as
    /// a device lists them oldest first. More than a device's queue holds is never needed.
    public static let maximumLoginAcknowledgements = 1_000
    /// The longest message id a receipt may name (Herald's ids are about 40 bytes).
    public static let maximumReceiptIDBytes = 128
    /// Messages sent and not yet acknowledged, by persistent id.
    private(set) var inFlight: [String: Int64] = [:]
    /// The highest queue sequence sent on this connection while awake.
    private var sentThrough: Int64 = 0
    /// The highest queue sequence sent while dozing (only high-priority messages flow).
    private var highSentThrough: Int64 = 0
    /// Sequences handed over as they were stored (`stored(_:now:)`), above `sentThrough`:
    /// a later read of the queue skips them.
    private var pushed: Set<Int64> = []
    private var isLoading = false
    private var wantsReload = false
    /// When to read the queue again after a read the store could not answer (it was
    /// unreachable): the connection stays, and the read is tried each second.
    private var loadRetryAt: Timestamp?
    /// How long a session waits before reading its queue again after the store failed.
    public static let loadRetryMilliseconds: Int64 = 1000
    /// Whether the queue may hold messages not yet read: true after a wake-up or a full
    /// page, false after a read that came back short. Acknowledgements read again only
    /// when it is true.
    private var mayHaveMore = true
    /// Whether the device reported that it dozes (SEMANTICS D4).
    public private(set) var isDozing = false

    /// Decides whether a collapsible message may go now (SEMANTICS T4): nil when it may,
    /// otherwise when the app instance's next token will be there.
    public typealias CollapsibleThrottle = @Sendable (QueuedMessage, Timestamp) -> Timestamp?

    private let throttle: CollapsibleThrottle?
    /// When the earliest collapsible message held back by T4 may go; the queue is read
    /// again from its start then, so that the message (or what replaced it) is found.
    private var heldUntil: Timestamp?
    /// Ids acknowledged lately, oldest first: a queue read that runs before their deletion
    /// is committed skips them.
    private var recentlyAcknowledged = RecentIDs(capacity: rememberedAcknowledgements)
    /// Ids sent at once and never stored (SEMANTICS D6): their acknowledgements need no
    /// store work, and are not counted as stray.
    private var sentUnstored = RecentIDs(capacity: rememberedAcknowledgements)

    public init(configuration: GatewayConfiguration, now: Timestamp, throttle: CollapsibleThrottle? = nil) {
        self.throttle = throttle
        self.configuration = configuration
        openedAt = now
        lastInbound = now
        lastOutbound = now
        heartbeatSeconds = configuration.heartbeatSeconds
    }

    /// The device, once logged in.
    public var androidID: UInt64? {
        if case .established(let id) = phase { return id }
        return nil
    }

    /// Whether the connection is finished.
    public var isClosed: Bool { phase == .closed }

    // MARK: Events

    /// A frame arrived from the device.
    public mutating func received(_ frame: MCSFrame, now: Timestamp) -> [Action] {
        guard phase != .closed else { return [] }
        lastInbound = now
        switch phase {
        case .awaitingLogin:
            guard frame.tag == .loginRequest else {
                return fail("bad-request", "the first frame must be a LoginRequest")
            }
            return receivedLogin(frame)
        case .authenticating:
            guard frame.tag == .heartbeatPing || frame.tag == .heartbeatAck else {
                return fail("bad-request", "frame before the login completed")
            }
            return []
        case .established:
            inboundCount &+= 1
            return receivedStanza(frame, now: now)
        case .closed:
            return []
        }
    }

    /// The byte stream could not be decoded.
    public mutating func receivedMalformedData(_ reason: String) -> [Action] {
        guard phase != .closed else { return [] }
        return fail("bad-format", reason)
    }

    /// The store answered the login check.
    public mutating func authenticated(_ accepted: Bool, now: Timestamp) -> [Action] {
        guard phase == .authenticating, let login else { return [] }
        // Nothing of the request is needed once it is answered; an idle connection should not keep it.
        self.login = nil
        var response = McsProto_LoginResponse()
        response.id = login.id
        guard accepted, let androidID = UInt64(login.user) else {
            var error = McsProto_ErrorInfo()
            error.code = 401
            error.message = "authentication failed"
            response.error = error
            phase = .closed
            return [send(.loginResponse, response, now: now), .close(reason: "authentication failed")]
        }
        phase = .established(androidID: androidID)
        response.jid = "\(androidID)@mcs.android.com"
        response.lastStreamIDReceived = inboundCount
        var heartbeat = McsProto_HeartbeatConfig()
        heartbeat.intervalMs = Int32(heartbeatSeconds * 1000)
        response.heartbeatConfig = heartbeat
        response.serverTimestamp = now.milliseconds
        var actions = [send(.loginResponse, response, now: now)]
        // Ids the device says it received were delivered: their acknowledgements may have been lost.
        if !login.receivedPersistentID.isEmpty {
            actions.append(.acknowledge(Array(login.receivedPersistentID.suffix(Self.maximumLoginAcknowledgements))))
        }
        actions += requestLoad()
        return actions
    }

    /// A page of the device's queue was read.
    public mutating func loaded(_ messages: [QueuedMessage], requested limit: Int, now: Timestamp) -> [Action] {
        guard case .established = phase else { return [] }
        isLoading = false
        var actions: [Action] = []
        for message in messages where inFlight[message.persistentID] == nil {
            if isDozing {
                guard message.sequence > highSentThrough, message.isHighPriority else { continue }
                highSentThrough = message.sequence
            } else {
                guard message.sequence > sentThrough else { continue }
                sentThrough = message.sequence
            }
            guard !pushed.contains(message.sequence), !recentlyAcknowledged.contains(message.persistentID),
                mayGo(message, now: now), let action = deliver(message, now: now)
            else { continue }
            actions.append(action)
            inFlight[message.persistentID] = message.sequence
        }
        // The read saw everything up to `sentThrough`: pushed entries below it were sent or are gone.
        if !isDozing { pushed = pushed.filter { $0 > sentThrough } }
        mayHaveMore = messages.count >= limit || wantsReload
        if mayHaveMore {
            actions += requestLoad()
        }
        return actions
    }

    /// The store could not read the device's queue (it is failing over): the connection
    /// stays open and the read is tried again at `loadRetryAt`.
    public mutating func loadFailed(now: Timestamp) -> [Action] {
        guard case .established = phase else { return [] }
        isLoading = false
        wantsReload = false
        mayHaveMore = true
        loadRetryAt = now.adding(milliseconds: Self.loadRetryMilliseconds)
        return []
    }

    /// The device's queue may hold new messages.
    public mutating func wake() -> [Action] {
        guard case .established = phase else { return [] }
        mayHaveMore = true
        return requestLoad()
    }

    /// A message was just stored in the device's queue. An idle session sends it at once
    /// instead of reading the queue back; otherwise this is a `wake()`. The entry's
    /// sequence is remembered, not `sentThrough`: an older entry stored by another writer
    /// may still be on its way, and the next read must find it.
    public mutating func stored(_ message: QueuedMessage, now: Timestamp) -> [Action] {
        guard case .established = phase else { return [] }
        if inFlight[message.persistentID] == Self.notYetStored {
            // Sent when it was offered: now it has a sequence, which the next read must skip.
            inFlight[message.persistentID] = message.sequence
            if message.sequence > sentThrough { pushed.insert(message.sequence) }
            return []
        }
        // Sent when it was offered and acknowledged before its row was written.
        if recentlyAcknowledged.contains(message.persistentID) { return [] }
        guard isIdle(for: message), message.sequence > sentThrough else { return wake() }
        guard mayGo(message, now: now), let action = deliver(message, now: now) else { return [] }
        pushed.insert(message.sequence)
        inFlight[message.persistentID] = message.sequence
        return [action]
    }

    /// The `inFlight` value of an entry sent before its row was written (sequences start at 1).
    static let notYetStored: Int64 = 0

    /// A message is being stored for the device: an idle session that is awake sends it
    /// now rather than after the write, when storing it cannot turn out otherwise. That
    /// holds for a collapsible message (SEMANTICS D2: always stored) and for a
    /// non-collapsible one while the messages in flight are under half of
    /// `maximumPending` (D1: the queue cannot overflow). Answers `tookOffer` and the send,
    /// or `declinedOffer` if the message waits for its row as usual.
    public mutating func offered(_ message: QueuedMessage, maximumPending: Int, now: Timestamp) -> [Action] {
        guard case .established = phase, isIdle(for: message), message.deletedCount == 0,
            message.collapseKey != nil || (inFlight.count + 1) * 2 <= maximumPending,
            !recentlyAcknowledged.contains(message.persistentID),
            mayGo(message, now: now), let action = deliver(message, now: now)
        else { return [.declinedOffer(persistentID: message.persistentID)] }
        inFlight[message.persistentID] = Self.notYetStored
        // Told before the frame is written: the device's acknowledgement must find it taken.
        return [.tookOffer(persistentID: message.persistentID), action]
    }

    /// Whether the session may send `message` at once, without reading the queue: awake,
    /// no read under way or owed, room in the window, and the message not in flight.
    private func isIdle(for message: QueuedMessage) -> Bool {
        !isDozing && !isLoading && !mayHaveMore && pushed.count < Self.maximumPushed
            && inFlight.count < configuration.maximumInFlight && inFlight[message.persistentID] == nil
    }

    /// How many acknowledged ids a session remembers.
    static let rememberedAcknowledgements = 64

    /// How many pushed sequences a session remembers before it reads its queue instead.
    static let maximumPushed = 256

    /// Whether a queued message may be sent now under SEMANTICS T4; when it may not, it
    /// stays in the queue (where a newer one can still replace it) until a token is there.
    private mutating func mayGo(_ message: QueuedMessage, now: Timestamp) -> Bool {
        guard message.collapseKey != nil, message.deletedCount == 0, let throttle,
            let due = throttle(message, now)
        else { return true }
        heldUntil = min(heldUntil ?? due, due)
        return false
    }

    /// A message to send at once, not stored (SEMANTICS D6); nothing happens unless the
    /// device is logged in and can take it.
    public mutating func deliverNow(_ message: QueuedMessage, now: Timestamp) -> [Action] {
        guard case .established = phase, !isDozing || message.isHighPriority,
            let action = deliver(message, now: now)
        else { return [] }
        sentUnstored.append(contentsOf: [message.persistentID])
        return [action]
    }

    /// The earliest time at which a clock tick can do anything for this session: before
    /// it, `tick(now:)` answers no actions and changes nothing, so the gateway need not
    /// tick the session at all. Nil once it is closed.
    public var nextTick: Timestamp? {
        switch phase {
        case .awaitingLogin, .authenticating:
            return openedAt.adding(milliseconds: Int64(configuration.loginTimeoutSeconds) * 1000 + 1)
        case .established:
            // The count of pings is reset by the next tick.
            if pingsSinceTick > 0 { return lastInbound }
            let deadAfter = Int64(configuration.deadAfterSeconds(heartbeatSeconds: heartbeatSeconds)) * 1000
            var due = min(
                lastInbound.adding(milliseconds: deadAfter + 1), lastOutbound.adding(seconds: Int64(heartbeatSeconds)))
            // A held message waits for a queue read under way; its answer is an event of its own.
            if let heldUntil, !isLoading { due = min(due, heldUntil) }
            if let loadRetryAt { due = min(due, loadRetryAt) }
            return due
        case .closed:
            return nil
        }
    }

    /// Time passed: log-in deadlines, dead connections and heartbeats.
    public mutating func tick(now: Timestamp) -> [Action] {
        pingsSinceTick = 0
        switch phase {
        case .awaitingLogin, .authenticating:
            if now.milliseconds - openedAt.milliseconds > Int64(configuration.loginTimeoutSeconds) * 1000 {
                phase = .closed
                return [.close(reason: "login timeout")]
            }
            return []
        case .established:
            let deadAfter = Int64(configuration.deadAfterSeconds(heartbeatSeconds: heartbeatSeconds)) * 1000
            if now.milliseconds - lastInbound.milliseconds > deadAfter {
                phase = .closed
                return [.close(reason: "no heartbeat")]
            }
            var actions: [Action] = []
            if let loadRetryAt, now >= loadRetryAt {
                self.loadRetryAt = nil
                actions += wake()
            }
            if let heldUntil, now >= heldUntil, !isLoading {
                // A held collapsible message may go: read the queue again from its start.
                self.heldUntil = nil
                sentThrough = 0
                highSentThrough = 0
                actions += wake()
            }
            if now.milliseconds - lastOutbound.milliseconds >= Int64(heartbeatSeconds) * 1000 {
                var ping = McsProto_HeartbeatPing()
                ping.lastStreamIDReceived = inboundCount
                actions.append(send(.heartbeatPing, ping, now: now))
            }
            return actions
        case .closed:
            return []
        }
    }

    /// Another connection logged in for the same device.
    public mutating func replaced() -> [Action] {
        closing(reason: "replaced by a newer connection")
    }

    /// The gateway stops: the device is told to close, and reconnects (to another node, or
    /// to this one once it is back) with its usual backoff.
    public mutating func stopping() -> [Action] {
        closing(reason: "the gateway stops")
    }

    private mutating func closing(reason: String) -> [Action] {
        guard phase != .closed else { return [] }
        phase = .closed
        return [.send(MCSFrame(tag: .close, payload: [])), .close(reason: reason)]
    }

    // MARK: Helpers

    private mutating func receivedLogin(_ frame: MCSFrame) -> [Action] {
        guard let request = try? frame.decode(as: McsProto_LoginRequest.self) else {
            return fail("bad-request", "malformed LoginRequest")
        }
        login = request
        phase = .authenticating
        if let requested = requestedHeartbeatSeconds(request) {
            heartbeatSeconds = min(
                configuration.heartbeatSeconds, max(configuration.minimumHeartbeatSeconds, requested))
        }
        guard let androidID = UInt64(request.user), let token = UInt64(request.authToken) else {
            return [.authenticate(androidID: 0, securityToken: 0)]
        }
        return [.authenticate(androidID: androidID, securityToken: token)]
    }

    private func requestedHeartbeatSeconds(_ request: McsProto_LoginRequest) -> Int? {
        if let setting = request.setting.first(where: { $0.name == "hbping" }), let ms = Int(setting.value), ms > 0 {
            return ms / 1000
        }
        if request.hasHeartbeatStat, request.heartbeatStat.intervalMs > 0 {
            return Int(request.heartbeatStat.intervalMs) / 1000
        }
        return nil
    }

    private mutating func receivedStanza(_ frame: MCSFrame, now: Timestamp) -> [Action] {
        switch frame.tag {
        case .heartbeatPing:
            // A device pings every few minutes; one pinging many times a second is flooding.
            pingsSinceTick += 1
            guard pingsSinceTick <= Self.maximumPingsPerTick else {
                return fail("too-many-heartbeats", "more than \(Self.maximumPingsPerTick) heartbeats in a second")
            }
            var ack = McsProto_HeartbeatAck()
            ack.lastStreamIDReceived = inboundCount
            return [send(.heartbeatAck, ack, now: now)]
        case .iqStanza:
            guard let iq = try? frame.decode(as: McsProto_IqStanza.self) else {
                return fail("bad-request", "malformed IqStanza")
            }
            guard iq.hasExtension else { return [] }
            return receivedExtension(iq.extension, now: now)
        case .close:
            phase = .closed
            return [.close(reason: "closed by the device")]
        case .loginRequest:
            return fail("bad-request", "a second LoginRequest")
        case .dataMessageStanza:
            guard let stanza = try? frame.decode(as: McsProto_DataMessageStanza.self) else {
                return fail("bad-request", "malformed DataMessageStanza")
            }
            return [.upstream(MCSFrame.upstreamRequest(stanza))]
        default:
            // Presence and acks need no answer.
            return []
        }
    }

    private mutating func receivedExtension(_ extensionMessage: McsProto_Extension, now: Timestamp) -> [Action] {
        let text = String(decoding: extensionMessage.data, as: UTF8.self)
        switch extensionMessage.id {
        case MCSFrame.selectiveAckExtension:
            guard let ack = try? McsProto_SelectiveAck(serializedBytes: extensionMessage.data) else {
                return fail("bad-request", "malformed SelectiveAck")
            }
            return receivedAcknowledgement(ack.id, now: now)
        case MCSFrame.deviceStateExtension:
            switch text {
            case "doze":
                if !isDozing { highSentThrough = sentThrough }
                isDozing = true
                return []
            case "awake":
                isDozing = false
                mayHaveMore = true
                return requestLoad()
            default:
                return fail("bad-request", "unknown device state")
            }
        case MCSFrame.receiptExtension:
            let parts = text.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[1].isEmpty, parts[1].utf8.count <= Self.maximumReceiptIDBytes else {
                return fail("bad-request", "malformed receipt")
            }
            guard receipts.admit(now: now) else { return [] }
            switch parts[0] {
            case "opened": return [.recordReceipt(.opened, messageID: parts[1])]
            case "impression": return [.recordReceipt(.impressions, messageID: parts[1])]
            default: return fail("bad-request", "unknown receipt")
            }
        case MCSFrame.unregisterExtension:
            guard !text.isEmpty else { return fail("bad-request", "missing token") }
            return [.unregister(token: text)]
        default:
            return []
        }
    }

    /// A SelectiveAck: the ids this session sent and holds in flight are acknowledged; any
    /// other id is dropped here, before any store work (SEMANTICS N3), and counts against
    /// `maximumStrayAcknowledgementsPerMinute`.
    private mutating func receivedAcknowledgement(_ ids: [String], now: Timestamp) -> [Action] {
        var held: [String] = []
        var strays = 0
        for id in ids {
            if inFlight.removeValue(forKey: id) != nil {
                held.append(id)
            } else if !sentUnstored.contains(id) {
                strays += 1
            }
        }
        guard strayAcknowledgements.admit(strays, now: now) else {
            return fail(
                "too-many-acknowledgements",
                "more than \(Self.maximumStrayAcknowledgementsPerMinute) acknowledged ids in a minute that were not in flight"
            )
        }
        guard !held.isEmpty else { return [] }
        // All acknowledged: let the table's storage go while the connection idles.
        if inFlight.isEmpty { inFlight = [:] }
        recentlyAcknowledged.append(contentsOf: held)
        // The next page is read once half the window is free, not after every acknowledgement:
        // a device acknowledging one message at a time would otherwise cost a read per message.
        let refill = mayHaveMore && inFlight.count <= configuration.maximumInFlight / 2
        return [.acknowledge(held)] + (refill ? requestLoad() : [])
    }

    /// The frame that carries a queued message, with its persistent id and, for a
    /// "messages deleted" signal, the count.
    private mutating func deliver(_ message: QueuedMessage, now: Timestamp) -> Action? {
        guard !message.stanza.isEmpty else { return nil }
        return send(
            MCSFrame.dataMessage(
                stored: message.stanza, persistentID: message.persistentID, lastStreamIDReceived: inboundCount,
                totalDeleted: message.deletedCount > 0 ? message.deletedCount : nil), now: now)
    }

    /// Asks for the next page of the queue unless a read is under way or the in-flight
    /// window is full.
    private mutating func requestLoad() -> [Action] {
        if isLoading {
            wantsReload = true
            return []
        }
        let room = configuration.maximumInFlight - inFlight.count
        guard room > 0 else { return [] }
        isLoading = true
        wantsReload = false
        return [
            .loadPending(after: isDozing ? highSentThrough : sentThrough, limit: room, highPriorityOnly: isDozing)
        ]
    }

    /// An upstream message the device sent was kept, or refused: a stream acknowledgement
    /// tells the device the server has it (the SDK's "sent"); a refusal comes first as a
    /// `send_error`, which needs no acknowledgement.
    public mutating func upstreamHandled(_ request: UpstreamRequest, error: UpstreamError?, now: Timestamp) -> [Action]
    {
        guard case .established = phase else { return [] }
        var actions: [Action] = []
        if let error {
            // Before the acknowledgement, so that the device never counts the message sent.
            let stanza = MCSFrame.sendErrorStanza(
                messageID: request.messageID, error: error, category: request.category,
                senderID: request.senderID ?? 0, token: request.token)
            actions.append(
                send(
                    MCSFrame.dataMessage(stored: stanza, persistentID: "", lastStreamIDReceived: inboundCount),
                    now: now))
        }
        return actions + [send(MCSFrame.streamAck(lastStreamIDReceived: inboundCount), now: now)]
    }

    private mutating func send(_ tag: MCSTag, _ message: some SwiftProtobuf.Message, now: Timestamp) -> Action {
        send((try? MCSFrame(tag, message)) ?? MCSFrame(tag: tag, payload: []), now: now)
    }

    private mutating func send(_ frame: MCSFrame, now: Timestamp) -> Action {
        lastOutbound = now
        outboundCount &+= 1
        return .send(frame)
    }

    private mutating func fail(_ type: String, _ text: String) -> [Action] {
        phase = .closed
        var error = McsProto_StreamErrorStanza()
        error.type = type
        error.text = text
        let frame = (try? MCSFrame(.streamErrorStanza, error)) ?? MCSFrame(tag: .streamErrorStanza, payload: [])
        return [.send(frame), .close(reason: text)]
    }
}
