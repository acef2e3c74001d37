import HeraldCore
import HeraldDelivery
import HeraldGateway
import HeraldProtocol
import Testing

/// `MCSSession.nextTick`: the gateway ticks a session only once it is due, so a tick
/// skipped before then must never change what the session does.
extension MCSSessionTests {
    /// What a session did at each second from 1 to `seconds`: `events` first (by second),
    /// then a tick, at every second or only where `nextTick` is due. Answers the log and how
    /// many ticks the session was given.
    func timeline(
        of session: MCSSession, seconds: Int64, tickingOnlyWhenDue: Bool,
        events: [Int64: (inout MCSSession, Timestamp) -> [MCSSession.Action]]
    ) -> (log: [String], ticks: Int) {
        var session = session
        var log: [String] = []
        var ticks = 0
        for second in 1...seconds {
            let now = start.adding(seconds: second)
            if let event = events[second] { log += event(&session, now).map { "\(second): \($0)" } }
            if !tickingOnlyWhenDue || (session.nextTick.map { $0 <= now } ?? false) {
                ticks += 1
                log += session.tick(now: now).map { "\(second) tick: \($0)" }
            }
        }
        return (log, ticks)
    }

    @Test func N2_aTickIsDueForTheLoginDeadlineAndNotBefore() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        let due = try #require(session.nextTick)
        #expect(due == start.adding(milliseconds: Int64(GatewayConfiguration().loginTimeoutSeconds) * 1000 + 1))
        var early = session
        #expect(early.tick(now: due.adding(milliseconds: -1)).isEmpty)
        #expect(session.tick(now: due) == [.close(reason: "login timeout")])
        #expect(session.nextTick == nil)
    }

    @Test func aQueueReadTheStoreCouldNotAnswerIsTriedAgainEachSecondAndTheConnectionStays() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        let login = loggedIn(&session)
        guard case .loadPending(let after, let limit, _) = try #require(login.last) else {
            Issue.record("no queue read after the login")
            return
        }
        // The store is failing over: nothing happens until the retry is due.
        #expect(session.loadFailed(now: start).isEmpty)
        let retry = start.adding(milliseconds: MCSSession.loadRetryMilliseconds)
        #expect(session.nextTick == retry)
        var early = session
        #expect(early.tick(now: retry.adding(milliseconds: -1)).isEmpty)
        #expect(session.tick(now: retry) == [.loadPending(after: after, limit: limit, highPriorityOnly: false)])
        #expect(session.loadFailed(now: retry).isEmpty)
        let next = retry.adding(milliseconds: MCSSession.loadRetryMilliseconds)
        #expect(session.tick(now: next) == [.loadPending(after: after, limit: limit, highPriorityOnly: false)])
        let actions = session.loaded([message(1)], requested: limit, now: next)
        #expect(sentFrames(actions).count == 1)
        // Read at last: no retry is due any more.
        #expect(try #require(session.nextTick) > next.adding(milliseconds: MCSSession.loadRetryMilliseconds))
    }

    @Test func N2_anIdleSessionIsDueAtItsHeartbeatAndAfterADevicesPing() throws {
        var session = MCSSession(configuration: configuration(), now: start)
        _ = loggedIn(&session)
        // The login answer went out at `start`; the device asked for 20 s heartbeats.
        #expect(session.nextTick == start.adding(seconds: 20))
        // A ping from the device is counted until the next tick, which is due at once.
        _ = session.received(MCSFrame(tag: .heartbeatPing, payload: []), now: start.adding(seconds: 5))
        #expect(session.nextTick == start.adding(seconds: 5))
        _ = session.tick(now: start.adding(seconds: 6))
        #expect(session.nextTick == start.adding(seconds: 25))
    }

    @Test func N2_T4_skippingTicksThatAreNotDueChangesNothingASessionDoes() throws {
        func session() -> MCSSession {
            var settings = ProjectSettings()
            settings.collapsibleBurst = 1
            settings.collapsibleRefillSeconds = 30
            var configuration = configuration()
            configuration.maximumInFlight = 10
            let quotas = Quotas()
            let limits = settings
            var session = MCSSession(configuration: configuration, now: start) { message, now in
                quotas.takeCollapsible(token: message.token, settings: limits, now: now)
            }
            _ = loggedIn(&session)
            return session
        }
        let ping = MCSFrame(tag: .heartbeatPing, payload: [])
        let events: [Int64: (inout MCSSession, Timestamp) -> [MCSSession.Action]] = [
            // Three pings in one second, then a page with a collapsible message held by T4.
            3: { session, now in (0..<3).flatMap { _ in session.received(ping, now: now) } },
            4: { session, now in
                session.loaded([self.collapsible(1, key: "a"), self.collapsible(2, key: "b")], requested: 10, now: now)
            },
            // The queue read the held message asked for comes back empty.
            36: { session, now in session.loaded([], requested: 9, now: now) },
        ]
        let everySecond = timeline(of: session(), seconds: 90, tickingOnlyWhenDue: false, events: events)
        let whenDue = timeline(of: session(), seconds: 90, tickingOnlyWhenDue: true, events: events)
        #expect(whenDue.log == everySecond.log)
        #expect(everySecond.ticks == 90)
        #expect(whenDue.ticks < 10)
        // The timeline has what ticks are for: the held message's read, pings, the close.
        let tickActions = everySecond.log.filter { $0.contains("tick") }.joined(separator: "\n")
        #expect(tickActions.contains("loadPending"))
        #expect(tickActions.contains("no heartbeat"))
        #expect(everySecond.log.filter { $0.contains("tick: send") }.count >= 2)
    }
}
