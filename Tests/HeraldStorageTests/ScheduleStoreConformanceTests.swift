import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Conformance for sends scheduled for later: listed by project, cancelled only while
/// waiting, claimed by one caller at a time under a lease, taken over once it runs out.
@Suite struct ScheduleStoreConformanceTests {
    static func send(_ id: String, project: String = "alpha-one", dueAt seconds: Int64) -> ScheduledSend {
        ScheduledSend(
            id: id, projectID: project, messageID: "0:\(seconds)%\(id)", body: #"{"message":{"topic":"news"}}"#,
            summary: "topic news", dueAt: Timestamp(seconds: seconds), createdBy: "ada",
            createdAt: Timestamp(seconds: 1))
    }

    @Test(arguments: Backend.allCases)
    func aSendIsClaimedWhenDueOnceUntilItsLeaseRunsOutAndEndsOnce(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        for (id, due) in [("s1", 100), ("s2", 200), ("s3", 150)] {
            try await store.addScheduledSend(Self.send(id, dueAt: Int64(due)))
        }
        try await store.addScheduledSend(Self.send("b1", project: "beta-one", dueAt: 120))
        #expect(try await store.scheduledSends(projectID: "alpha-one", limit: 10).map(\.id) == ["s2", "s3", "s1"])
        #expect(try await store.scheduledSends(projectID: "alpha-one", limit: 2).map(\.id) == ["s2", "s3"])
        // Nothing is due before its time.
        #expect(
            try await store.claimDueSends(now: Timestamp(seconds: 99), until: Timestamp(seconds: 130), limit: 10)
                .isEmpty)
        let first = try await store.claimDueSends(
            now: Timestamp(seconds: 160), until: Timestamp(seconds: 190), limit: 10)
        #expect(first.map(\.id) == ["s1", "b1", "s3"])
        #expect(
            first.allSatisfy { $0.state == .sending && $0.attempts == 1 && $0.leasedUntil == Timestamp(seconds: 190) })
        #expect(
            first[0]
                == {
                    var s = Self.send("s1", dueAt: 100); s.state = .sending; s.attempts = 1;
                    s.leasedUntil = Timestamp(seconds: 190); return s
                }())
        // Claimed sends are not claimed again while their lease lasts, nor cancelled.
        #expect(
            try await store.claimDueSends(now: Timestamp(seconds: 180), until: Timestamp(seconds: 210), limit: 10)
                .isEmpty)
        #expect(try await store.cancelScheduledSend(projectID: "alpha-one", id: "s3") == false)
        #expect(try await store.finishScheduledSend(id: "s1", state: .sent, outcome: "projects/alpha-one/messages/m1"))
        #expect(try await store.finishScheduledSend(id: "s1", state: .failed, outcome: "again") == false)
        #expect(try await store.finishScheduledSend(id: "b1", state: .failed, outcome: "The topic name is not valid."))
        // s3's claimant did not finish: once its lease ran out, it is claimed again.
        let again = try await store.claimDueSends(
            now: Timestamp(seconds: 190), until: Timestamp(seconds: 220), limit: 10)
        #expect(again.map(\.id) == ["s3"] && again[0].attempts == 2)
        let listed = try await store.scheduledSends(projectID: "alpha-one", limit: 10)
        #expect(listed.map(\.state) == [.waiting, .sending, .sent])
        #expect(listed.last?.outcome == "projects/alpha-one/messages/m1")
        #expect(try await store.scheduledSends(projectID: "beta-one", limit: 10).map(\.state) == [.failed])
    }

    @Test(arguments: Backend.allCases)
    func onlyAWaitingSendOfTheSameProjectIsCancelled(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.addScheduledSend(Self.send("s1", dueAt: 100))
        #expect(try await store.cancelScheduledSend(projectID: "beta-one", id: "s1") == false)
        #expect(try await store.cancelScheduledSend(projectID: "alpha-one", id: "nothing") == false)
        #expect(try await store.cancelScheduledSend(projectID: "alpha-one", id: "s1"))
        #expect(try await store.cancelScheduledSend(projectID: "alpha-one", id: "s1") == false)
        #expect(
            try await store.claimDueSends(now: Timestamp(seconds: 500), until: Timestamp(seconds: 530), limit: 10)
                .isEmpty)
        #expect(try await store.scheduledSends(projectID: "alpha-one", limit: 10).map(\.state) == [.cancelled])
    }

    @Test(arguments: Backend.allCases)
    func claimantsRacingForTheSameSendsEachGetDifferentOnes(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        for index in 0..<40 { try await store.addScheduledSend(Self.send("s\(index)", dueAt: 100 + Int64(index))) }
        let claimed = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var mine: [String] = []
                    while true {
                        let batch = try await store.claimDueSends(
                            now: Timestamp(seconds: 1000), until: Timestamp(seconds: 2000), limit: 3)
                        if batch.isEmpty { return mine }
                        mine += batch.map(\.id)
                    }
                }
            }
            return try await group.reduce(into: []) { $0 += $1 }
        }
        #expect(claimed.count == 40 && Set(claimed).count == 40)
    }
}
