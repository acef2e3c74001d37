import HeraldCore
import Testing

/// The batch-admission planner every store backend applies (SEMANTICS D1, D2).
struct QueueBatchPlanTests {
    static let limits = QueueLimits(maximumPending: 3, maximumCollapseKeys: 2)

    static func entry(
        _ id: String, device: UInt64 = 1, token: String = "t1", sequence: Int64 = 0, collapseKey: String? = nil
    ) -> QueuedMessage {
        QueuedMessage(
            sequence: sequence, androidID: device, token: token, persistentID: id, messageID: id, projectID: "p",
            stanza: [1], createdAt: Timestamp(milliseconds: 1_000), expiresAt: Timestamp(milliseconds: 9_000_000),
            collapseKey: collapseKey, isHighPriority: false, appID: "app", analyticsLabel: "", deletedCount: 0,
            deletionSignalStanza: [9])
    }

    @Test func D2_aLaterEntryOfTheBatchReplacesAnEarlierOneThatIsThenNeverInserted() throws {
        let stored = Self.entry("old", sequence: 7, collapseKey: "k")
        let plan = try QueueBatchPlan(
            [Self.entry("a", collapseKey: "k"), Self.entry("b", collapseKey: "k")], current: [stored], taken: [],
            limits: Self.limits, stats: [])
        #expect(plan.deletes == [7])
        #expect(plan.inserts.map(\.persistentID) == ["b"])
        let enqueued = plan.enqueued(sequences: [42])
        #expect(enqueued.count == 2)
        #expect(enqueued[0].stored.isEmpty)
        #expect(enqueued[1].stored.map(\.sequence) == [42])
        #expect(plan.stats.filter { $0.counter == .collapsed }.count == 2)
    }

    @Test func D1_theEntryPastTheLimitDeletesTheQueueAndLeavesOneSignal() throws {
        let current = (1...3).map { Self.entry("s\($0)", sequence: Int64($0)) }
        let plan = try QueueBatchPlan(
            [Self.entry("over")], current: current, taken: [], limits: Self.limits, stats: [])
        #expect(plan.deletes == [1, 2, 3])
        #expect(plan.inserts.count == 1)
        #expect(plan.inserts[0].deletedCount == 4)
        #expect(plan.inserts[0].stanza == [9])
        #expect(plan.stats.filter { $0.counter == .droppedTooManyPending }.count == 4)
    }

    @Test func D1_entriesOfOneBatchCountTowardsTheLimitOfTheirQueue() throws {
        let entries = (1...4).map { Self.entry("e\($0)") }
        let plan = try QueueBatchPlan(entries, current: [], taken: [], limits: Self.limits, stats: [])
        // The fourth overflows a queue of three that the batch itself filled: none of the
        // three is inserted, only the signal.
        #expect(plan.deletes.isEmpty)
        #expect(plan.inserts.map(\.deletedCount) == [4])
        let enqueued = plan.enqueued(sequences: [10])
        #expect(enqueued.prefix(3).allSatisfy { $0.stored.isEmpty })
        #expect(enqueued[3].stored.map(\.sequence) == [10])
    }

    @Test func queuesAreKeptPerTokenAndPerDevice() throws {
        let current = [
            Self.entry("x", device: 1, token: "t1", sequence: 1, collapseKey: "k"),
            Self.entry("y", device: 1, token: "t2", sequence: 2, collapseKey: "k"),
            Self.entry("z", device: 2, token: "t1", sequence: 3, collapseKey: "k"),
        ]
        let plan = try QueueBatchPlan(
            [Self.entry("new", device: 1, token: "t1", collapseKey: "k")], current: current, taken: [],
            limits: Self.limits, stats: [])
        #expect(plan.deletes == [1])
    }

    @Test func aRepeatedPersistentIdOfTheDeviceIsAConflict() {
        #expect(throws: QueueBatchPlan.Conflict(persistentID: "a")) {
            try QueueBatchPlan(
                [Self.entry("a")], current: [], taken: [.init(androidID: 1, persistentID: "a")], limits: Self.limits,
                stats: [])
        }
        #expect(throws: QueueBatchPlan.Conflict(persistentID: "a")) {
            try QueueBatchPlan(
                [Self.entry("a"), Self.entry("a")], current: [], taken: [], limits: Self.limits, stats: [])
        }
        // The same id on another device is no conflict.
        let plan = try? QueueBatchPlan(
            [Self.entry("a", device: 1), Self.entry("a", device: 2)], current: [], taken: [], limits: Self.limits,
            stats: [])
        #expect(plan?.inserts.count == 2)
    }

    @Test func theBatchStatsComeFirstThenWhatTheDecisionsDropped() throws {
        let stat = DeliveryStat(
            DeliveryStatKey(projectID: "p", at: Timestamp(milliseconds: 0), appID: "app", label: ""), .accepted)
        let plan = try QueueBatchPlan(
            [Self.entry("a", collapseKey: "k")], current: [Self.entry("o", sequence: 5, collapseKey: "k")], taken: [],
            limits: Self.limits, stats: [stat])
        #expect(plan.stats.first == stat)
        #expect(plan.stats.last?.counter == .collapsed)
    }
}
