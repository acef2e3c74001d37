import HeraldCore
import HeraldDelivery
import HeraldGateway
import HeraldProtocol
import Testing

/// The MCS session state machine, driven by events with a manual clock and no sockets.
@Suite struct MCSSessionTests {
    let start = Timestamp(seconds: 1_800_000_000)

    func configuration(heartbeat: Int = 60) -> GatewayConfiguration {
        var configuration = GatewayConfiguration()
        configuration.heartbeatSeconds = heartbeat
        configuration.maximumInFlight = 2
        return configuration
    }

    func loggedIn(_ session: inout MCSSession, received: [String] = []) -> [MCSSession.Action] {
        let login = MCSFrame.login(
            androidID: 7, securityToken: 9, receivedPersistentIDs: received, heartbeatSeconds: 20)
        #expect(session.received(login, now: start) == [.authenticate(androidID: 7, securityToken: 9)])
        return session.authenticated(true, now: start)
    }

    func sentFrames(_ actions: [MCSSession.Action]) -> [MCSFrame] {
        actions.compactMap { if case .send(let frame) = $0 { return frame } else { return nil } }
    }

    func message(_ sequence: Int64, high: Bool = false) -> QueuedMessage {
        var stanza = McsProto_DataMessageStanza()
        stanza.from = "1"
        stanza.category = "app"
        return QueuedMessage(
            sequence: sequence, androidID: 7, token: "t", persistentID: "p\(sequence)", messageID: "m\(sequence)",
            projectID: "p", stanza: try! stanza.serializedBytes(), createdAt: start,
            expiresAt: start.adding(seconds: 60),
            isHighPriority: high)
    }

    @Test func aLoginIsCheckedThenAnsweredAndTheQueueIsRead() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        let actions = loggedIn(&session, received: ["old"])
        let response = try sentFrames(actions)[0].decode(as: McsProto_LoginResponse.self)
        #expect(!response.hasError)
        #expect(response.heartbeatConfig.intervalMs == 20_000)
        #expect(actions.contains(.acknowledge(["old"])))
        #expect(actions.last == .loadPending(after: 0, limit: 2, highPriorityOnly: false))
        #expect(session.androidID == 7)
    }

    func persistentIDs(_ actions: [MCSSession.Action]) throws -> [String] {
        try sentFrames(actions).map { try $0.decode(as: McsProto_DataMessageStanza.self).persistentID }
    }

    @Test func L4_anIdleSessionSendsAStoredEntryWithoutReadingTheQueueBack() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        // Stored by the fanout engine: sent at once, no read of the queue.
        let pushed = session.stored(message(5), now: start)
        #expect(try persistentIDs(pushed) == ["p5"])
        #expect(pushed.count == 1)
        #expect(try persistentIDs(session.stored(message(9), now: start)) == ["p9"])
        // An older entry stored by another writer is announced later, when the window is
        // full: the read after the acknowledgement still finds it (pushed sequences did not
        // move the read position) and skips the pushed ones.
        #expect(session.stored(message(3), now: start).isEmpty)
        let acked = session.received(MCSFrame.selectiveAck(["p5"]), now: start)
        #expect(acked.last == .loadPending(after: 0, limit: 1, highPriorityOnly: false))
        let loaded = session.loaded([message(3), message(5), message(9)], requested: 1, now: start)
        #expect(try persistentIDs(loaded) == ["p3"])
    }

    @Test func L4_aStoredEntryIsNotPushedAgainAfterTheReadPassedIt() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        #expect(try persistentIDs(session.stored(message(5), now: start)) == ["p5"])
        _ = session.received(MCSFrame.selectiveAck(["p5"]), now: start)
        // Acknowledged but, say, not yet deleted: a read that returns it sends nothing.
        _ = session.wake()
        #expect(try persistentIDs(session.loaded([message(5)], requested: 2, now: start)).isEmpty)
        // A dozing session does not take pushes: they become a (high-priority) read.
        _ = session.received(MCSFrame.heraldExtension(MCSFrame.deviceStateExtension, "doze"), now: start)
        #expect(
            session.stored(message(6), now: start) == [.loadPending(after: 5, limit: 2, highPriorityOnly: true)])
    }

    func collapsible(_ sequence: Int64, key: String = "score") -> QueuedMessage {
        var entry = message(sequence)
        entry.collapseKey = key
        return entry
    }

    @Test func T4_collapsibleMessagesPastTheBurstAreDelayedNotDropped() throws {
        let quotas = Quotas()
        var settings = ProjectSettings()
        settings.collapsibleBurst = 2
        settings.collapsibleRefillSeconds = 180
        var configuration = configuration()
        configuration.maximumInFlight = 10
        let limits = settings
        var session = MCSSession(configuration: configuration, now: start) { message, now in
            quotas.takeCollapsible(token: message.token, settings: limits, now: now)
        }
        _ = loggedIn(&session)
        // Two go, the third collapsible one stays in the queue; a non-collapsible one is not held.
        let first = session.loaded(
            [collapsible(1, key: "a"), collapsible(2, key: "b"), collapsible(3, key: "c"), message(4)],
            requested: 10, now: start)
        #expect(try persistentIDs(first) == ["p1", "p2", "p4"])
        // The device stays alive with heartbeats meanwhile.
        let ping = MCSFrame(tag: .heartbeatPing, payload: [])
        _ = session.received(ping, now: start.adding(seconds: 179))
        #expect(session.tick(now: start.adding(seconds: 179)).isEmpty)
        _ = session.received(ping, now: start.adding(seconds: 180))
        // When the token is there the queue is read again from its start, and what is
        // there now goes: here a newer message that replaced the held one (it still collapsed).
        let due = session.tick(now: start.adding(seconds: 180))
        #expect(due == [.loadPending(after: 0, limit: 7, highPriorityOnly: false)])
        let again = session.loaded(
            [collapsible(1, key: "a"), collapsible(2, key: "b"), collapsible(5, key: "c"), message(4)],
            requested: 7, now: start.adding(seconds: 180))
        #expect(try persistentIDs(again) == ["p5"])
    }

    @Test func T4_messagesWithTTLZeroAreExempt() throws {
        let quotas = Quotas()
        var settings = ProjectSettings()
        settings.collapsibleBurst = 1
        let limits = settings
        var session = MCSSession(configuration: configuration(), now: start) { message, now in
            quotas.takeCollapsible(token: message.token, settings: limits, now: now)
        }
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        #expect(try persistentIDs(session.deliverNow(collapsible(1), now: start)) == ["p1"])
        #expect(try persistentIDs(session.deliverNow(collapsible(2), now: start)) == ["p2"])
        // A stored one uses the burst; the next stored one is held.
        #expect(try persistentIDs(session.stored(collapsible(3), now: start)) == ["p3"])
        _ = session.received(MCSFrame.selectiveAck(["p1", "p2", "p3"]), now: start)
        #expect(try persistentIDs(session.stored(collapsible(4), now: start)).isEmpty)
    }

    @Test func aRefusedLoginGetsAnErrorAndACloseAndNothingElse() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = session.received(MCSFrame.login(androidID: 7, securityToken: 1), now: start)
        let actions = session.authenticated(false, now: start)
        #expect(try sentFrames(actions)[0].decode(as: McsProto_LoginResponse.self).error.code == 401)
        #expect(actions.last == .close(reason: "authentication failed"))
        #expect(session.isClosed)
        #expect(session.wake().isEmpty)
    }

    @Test func aFirstFrameOtherThanALoginIsAStreamError() {
        var session = MCSSession(configuration: configuration(), now: start)
        let actions = session.received(MCSFrame(tag: .heartbeatPing, payload: []), now: start)
        #expect(sentFrames(actions).first?.tag == .streamErrorStanza)
        #expect(session.isClosed)
    }

    @Test func L4_loadedMessagesGoOutWithTheirPersistentIDsWithinTheInFlightWindow() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        let actions = session.loaded([message(1), message(2)], requested: 2, now: start)
        let frames = sentFrames(actions)
        #expect(try frames.map { try $0.decode(as: McsProto_DataMessageStanza.self).persistentID } == ["p1", "p2"])
        // The window is full: a wake-up reads nothing until an acknowledgement frees room.
        #expect(!actions.contains { if case .loadPending = $0 { return true } else { return false } })
        #expect(session.wake().isEmpty)
        let acked = session.received(MCSFrame.selectiveAck(["p1"]), now: start)
        #expect(acked.first == .acknowledge(["p1"]))
        #expect(acked.contains(.loadPending(after: 2, limit: 1, highPriorityOnly: false)))
    }

    @Test func L4_aDrainingQueueIsReadAgainOnceHalfTheWindowIsFreeNotAfterEveryAcknowledgement() throws {
        var wide = configuration()
        wide.maximumInFlight = 10
        var session = MCSSession(configuration: wide, now: start)
        _ = loggedIn(&session)
        let loaded = session.loaded((1...10).map { message(Int64($0)) }, requested: 10, now: start)
        #expect(try persistentIDs(loaded) == (1...10).map { "p\($0)" })
        func isLoad(_ action: MCSSession.Action) -> Bool {
            if case .loadPending = action { return true } else { return false }
        }
        // A device acknowledging one message at a time: no read for the first four.
        for sequence in 1...4 {
            #expect(!session.received(MCSFrame.selectiveAck(["p\(sequence)"]), now: start).contains(where: isLoad))
        }
        // The fifth frees half of the window: the next page, five long, is read.
        let fifth = session.received(MCSFrame.selectiveAck(["p5"]), now: start)
        #expect(fifth.last == .loadPending(after: 10, limit: 5, highPriorityOnly: false))
    }

    @Test func N2_aDevicePingingManyTimesASecondIsCutOff() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        let ping = MCSFrame(tag: .heartbeatPing, payload: [])
        for _ in 0..<MCSSession.maximumPingsPerTick {
            #expect(sentFrames(session.received(ping, now: start)).map(\.tag) == [.heartbeatAck])
        }
        // A clock tick (a second) starts a new count.
        _ = session.tick(now: start.adding(seconds: 1))
        for _ in 0..<MCSSession.maximumPingsPerTick {
            #expect(sentFrames(session.received(ping, now: start)).map(\.tag) == [.heartbeatAck])
        }
        let flooded = session.received(ping, now: start)
        #expect(sentFrames(flooded).map(\.tag) == [.streamErrorStanza])
        #expect(session.isClosed)
    }

    @Test func D4_aDozingDeviceIsOfferedHighPriorityOnlyUntilItWakes() {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        #expect(session.received(MCSFrame.heraldExtension(MCSFrame.deviceStateExtension, "doze"), now: start).isEmpty)
        #expect(session.wake() == [.loadPending(after: 0, limit: 2, highPriorityOnly: true)])
        let sent = session.loaded([message(1), message(2, high: true)], requested: 2, now: start)
        #expect(sentFrames(sent).count == 1)
        #expect(sent.last == .loadPending(after: 2, limit: 1, highPriorityOnly: true))
        // Waking while that read is under way: the read answers first, then the normal ones are read.
        #expect(session.received(MCSFrame.heraldExtension(MCSFrame.deviceStateExtension, "awake"), now: start).isEmpty)
        #expect(
            session.loaded([], requested: 1, now: start) == [.loadPending(after: 0, limit: 1, highPriorityOnly: false)])
    }

    @Test func N2_idleConnectionsArePingedAndSilentOnesClosed() {
        var session = MCSSession(configuration: configuration(heartbeat: 60), now: start)
        _ = loggedIn(&session)
        #expect(session.tick(now: start.adding(seconds: 10)).isEmpty)
        #expect(sentFrames(session.tick(now: start.adding(seconds: 21))).first?.tag == .heartbeatPing)
        let dead = session.tick(now: start.adding(seconds: 2 * 20 + 11))
        #expect(dead == [.close(reason: "no heartbeat")])
    }

    @Test func aPingIsAnsweredAndALoginThatNeverComesTimesOut() {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        #expect(
            sentFrames(session.received(MCSFrame(tag: .heartbeatPing, payload: []), now: start)).first?.tag
                == .heartbeatAck)
        var idle = MCSSession(configuration: configuration(), now: start)
        #expect(idle.tick(now: start.adding(seconds: 31)) == [.close(reason: "login timeout")])
    }

    @Test func receiptsUnregisteringAndReplacementBecomeActions() {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        #expect(
            session.received(MCSFrame.heraldExtension(MCSFrame.receiptExtension, "opened m1"), now: start)
                == [.recordReceipt(.opened, messageID: "m1")])
        #expect(
            session.received(MCSFrame.heraldExtension(MCSFrame.unregisterExtension, "tok"), now: start)
                == [.unregister(token: "tok")])
        let replaced = session.replaced()
        #expect(sentFrames(replaced).first?.tag == .close)
        #expect(session.isClosed)
    }

    /// A flood of receipts costs the store nothing: past `maximumReceiptsPerMinute` in a
    /// minute they are dropped unread, and the next minute counts again.
    @Test func L7_receiptsPastTheMinutesAllowanceAreDroppedUnread() {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        let receipt = MCSFrame.heraldExtension(MCSFrame.receiptExtension, "opened m1")
        var recorded = 0
        for _ in 0..<(MCSSession.maximumReceiptsPerMinute + 500) {
            recorded += session.received(receipt, now: start).count
        }
        #expect(recorded == MCSSession.maximumReceiptsPerMinute)
        #expect(!session.isClosed)
        #expect(session.received(receipt, now: start.adding(seconds: 60)) == [.recordReceipt(.opened, messageID: "m1")])
        let oversized = MCSFrame.heraldExtension(
            MCSFrame.receiptExtension, "opened " + String(repeating: "x", count: 200))
        _ = session.received(oversized, now: start.adding(seconds: 61))
        #expect(session.isClosed)
    }

    /// N2: a stopping gateway tells each device to close, so that it reconnects with its
    /// backoff instead of waiting for a dead connection's heartbeat to fail.
    @Test func N2_aStoppingGatewayTellsTheDeviceToClose() {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        let stopping = session.stopping()
        #expect(sentFrames(stopping).map(\.tag) == [.close])
        #expect(stopping.last == .close(reason: "the gateway stops"))
        #expect(session.isClosed)
        #expect(session.stopping().isEmpty)
    }

    @Test func D1_aDeletionSignalCarriesItsCount() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        var signal = message(1)
        signal.deletedCount = 101
        let stanza = try sentFrames(session.loaded([signal], requested: 2, now: start))[0].decode(
            as: McsProto_DataMessageStanza.self)
        #expect(stanza.appData.contains { $0.key == "total_deleted" && $0.value == "101" })
    }

    @Test func anAcknowledgementReadsTheQueueAgainOnlyWhenItMayHoldMore() {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        // A short read: the queue is drained, so acknowledging reads nothing.
        _ = session.loaded([message(1)], requested: 2, now: start)
        #expect(session.received(MCSFrame.selectiveAck(["p1"]), now: start) == [.acknowledge(["p1"])])
        // A wake-up means there may be more again.
        #expect(session.wake() == [.loadPending(after: 1, limit: 2, highPriorityOnly: false)])
    }

    /// An entry as the dispatcher offers it: not stored yet, so without a sequence.
    func offer(_ sequence: Int64, key: String? = nil) -> QueuedMessage {
        var entry = message(sequence)
        entry.sequence = 0
        entry.collapseKey = key
        return entry
    }

    @Test func L2_anIdleSessionSendsAnOfferedMessageBeforeItsRowIsWrittenAndOnlyOnce() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        let taken = session.offered(offer(5), maximumPending: 100, now: start)
        // The path hears it was taken before the frame goes, so the acknowledgement finds it.
        #expect(taken.first == .tookOffer(persistentID: "p5"))
        #expect(try persistentIDs(taken) == ["p5"])
        // The row is written: nothing is sent again and the queue is not read back.
        #expect(session.stored(message(5), now: start).isEmpty)
        #expect(session.received(MCSFrame.selectiveAck(["p5"]), now: start) == [.acknowledge(["p5"])])
        // A later read that returns the row (its deletion still on its way) skips it.
        #expect(session.wake() == [.loadPending(after: 0, limit: 2, highPriorityOnly: false)])
        #expect(try persistentIDs(session.loaded([message(5)], requested: 2, now: start)).isEmpty)
    }

    @Test func L2_anOfferedMessageAcknowledgedBeforeItsRowIsWrittenIsNotSentAgain() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        #expect(try persistentIDs(session.offered(offer(5), maximumPending: 100, now: start)) == ["p5"])
        #expect(session.received(MCSFrame.selectiveAck(["p5"]), now: start) == [.acknowledge(["p5"])])
        #expect(session.stored(message(5), now: start).isEmpty)
    }

    @Test func D1_anOfferWaitsForItsRowWhenStoringItCouldTurnOutOtherwise() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        // Still reading the queue: the session does not know what it holds.
        #expect(session.offered(offer(1), maximumPending: 100, now: start) == [.declinedOffer(persistentID: "p1")])
        _ = session.loaded([], requested: 2, now: start)
        // With a pending limit of 3, a second non-collapsible message in flight could be
        // the one that overflows the queue (D1): it waits for its row. A collapsible one
        // is always stored (D2) and goes.
        #expect(try persistentIDs(session.offered(offer(2), maximumPending: 3, now: start)) == ["p2"])
        #expect(session.offered(offer(3), maximumPending: 3, now: start) == [.declinedOffer(persistentID: "p3")])
        #expect(try persistentIDs(session.offered(offer(4, key: "k"), maximumPending: 3, now: start)) == ["p4"])
        // The window is full now.
        #expect(
            session.offered(offer(6, key: "j"), maximumPending: 3, now: start) == [.declinedOffer(persistentID: "p6")])
        // A declined offer arrives as a stored row and goes the usual way, by a read.
        #expect(session.stored(message(3), now: start).isEmpty)
        #expect(
            session.received(MCSFrame.selectiveAck(["p2"]), now: start)
                == [.acknowledge(["p2"]), .loadPending(after: 0, limit: 1, highPriorityOnly: false)])
    }

    @Test func D4_aDozingDeviceIsNotOfferedMessagesBeforeTheyAreStored() {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        _ = session.received(MCSFrame.heraldExtension(MCSFrame.deviceStateExtension, "doze"), now: start)
        #expect(session.offered(offer(1), maximumPending: 100, now: start) == [.declinedOffer(persistentID: "p1")])
    }

    /// Upstream messages: a device's DataMessageStanza is handed over to be kept; once kept,
    /// a stream acknowledgement counting it tells the device it was sent; a refusal comes
    /// first, as a `send_error` with no persistent id.
    @Test func anUpstreamMessageIsAcknowledgedOnceKeptAndARefusalIsASendError() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        _ = session.received(try MCSFrame(.heartbeatPing, McsProto_HeartbeatPing()), now: start)
        let request = UpstreamRequest(
            messageID: "up-1", to: "123@fcm.googleapis.com", category: "com.example", token: "tok", ttlSeconds: 60,
            data: ["k": "v"])
        let actions = session.received(MCSFrame.upstream(request), now: start)
        #expect(actions == [.upstream(request)])
        let kept = sentFrames(session.upstreamHandled(request, error: nil, now: start))
        #expect(kept.count == 1 && kept[0].tag == .iqStanza)
        let ack = try kept[0].decode(as: McsProto_IqStanza.self)
        #expect(ack.extension.id == MCSFrame.streamAckExtension && ack.lastStreamIDReceived == 2)
        let refused = sentFrames(session.upstreamHandled(request, error: .tooManyMessages, now: start))
        #expect(refused.map(\.tag) == [.dataMessageStanza, .iqStanza])
        let error = try refused[0].decode(as: McsProto_DataMessageStanza.self)
        #expect(error.persistentID.isEmpty && error.category == "com.example" && error.from == "123@fcm.googleapis.com")
        #expect(
            error.appData.map { "\($0.key)=\($0.value)" } == [
                "message_type=send_error", "google.message_id=up-1", "error=TooManyMessages",
            ])
        #expect(
            session.received(MCSFrame(tag: .dataMessageStanza, payload: [0xFF, 0xFF]), now: start).contains {
                if case .close = $0 { true } else { false }
            })
    }
}
