import HeraldCore
import HeraldDelivery
import HeraldGateway
import HeraldProtocol
import Testing

/// SEMANTICS N3: a session acknowledges only what it sent and still holds; other ids cost
/// no store work, and a connection that names many of them is closed.
extension MCSSessionTests {
    func isClose(_ action: MCSSession.Action) -> Bool {
        if case .close = action { return true }
        return false
    }

    @Test func N3_onlyIdsTheSessionSentAndHoldsAreAcknowledged() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        #expect(try persistentIDs(session.loaded([message(1), message(2)], requested: 2, now: start)) == ["p1", "p2"])
        // Ids it never sent, or sent and saw acknowledged already, are dropped in the session.
        let actions = session.received(MCSFrame.selectiveAck(["forged", "p1", "p9", "p1"]), now: start)
        #expect(actions.first == .acknowledge(["p1"]))
        #expect(session.received(MCSFrame.selectiveAck(["p1", "forged"]), now: start).isEmpty)
        #expect(!session.isClosed)
        #expect(session.received(MCSFrame.selectiveAck(["p2"]), now: start).first == .acknowledge(["p2"]))
    }

    @Test func N3_aMessageSentNowWithoutARowIsAcknowledgedWithoutStoreWorkOrBlame() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        #expect(try persistentIDs(session.deliverNow(message(4), now: start)) == ["p4"])
        let flood = Array(repeating: "p4", count: MCSSession.maximumStrayAcknowledgementsPerMinute + 1)
        #expect(session.received(MCSFrame.selectiveAck(flood), now: start).isEmpty)
        #expect(!session.isClosed)
    }

    @Test func N3_aConnectionNamingTooManyIdsItDoesNotHoldIsClosed() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        _ = session.loaded([], requested: 2, now: start)
        let allowance = MCSSession.maximumStrayAcknowledgementsPerMinute
        let stray = (0..<allowance / 2).map { "stray-\($0)" }
        #expect(session.received(MCSFrame.selectiveAck(stray), now: start).isEmpty)
        // The allowance is a minute's: the next minute starts again.
        let nextMinute = start.adding(seconds: 60)
        #expect(session.received(MCSFrame.selectiveAck(stray + stray), now: nextMinute).isEmpty)
        let closing = session.received(MCSFrame.selectiveAck(["one-more"]), now: nextMinute)
        #expect(closing.contains(where: isClose))
        let error = try sentFrames(closing)[0].decode(as: McsProto_StreamErrorStanza.self)
        #expect(error.type == "too-many-acknowledgements")
        #expect(session.isClosed)
    }

    @Test func N3_aLoginAcknowledgesTheNewestIdsItListsUpToABound() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        let listed = (0..<MCSSession.maximumLoginAcknowledgements + 500).map { "old-\($0)" }
        let actions = loggedIn(&session, received: listed)
        #expect(actions.contains(.acknowledge(Array(listed.suffix(MCSSession.maximumLoginAcknowledgements)))))
        #expect(!session.isClosed)
    }
}
