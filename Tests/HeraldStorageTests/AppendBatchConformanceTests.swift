import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Appends made at the same moment, as a busy node makes them: a store may write them
/// together (SQLite and PostgreSQL do), but each is answered as if it were alone.
@Suite struct AppendBatchConformanceTests {
    static let calls = 48

    /// The message of call `index`, its queue entry for device 42 and its count.
    static func append(_ index: Int, messageID: String? = nil) -> (StoredMessage, QueuedMessage, DeliveryStat) {
        let message = sampleMessage(messageID ?? "m\(index)")
        let entry = queued("q\(index)")
        return (message, entry, DeliveryStat(entry.statKey, .accepted))
    }

    static func accepted(_ report: [DeliveryReportRow]) -> Int {
        report.map { $0[.accepted] }.reduce(0, +)
    }

    @Test(arguments: Backend.allCases)
    func concurrentAppendsAreEachStoredCountedAndAnsweredWithTheirOwnRows(_ backend: Backend) async throws {
        let store = try await storeWithDevice(backend)
        let limits = QueueLimits(ProjectSettings())
        let answers = try await withThrowingTaskGroup(of: (Int, [Enqueued]).self) { group in
            for index in 0..<Self.calls {
                group.addTask {
                    let (message, entry, stat) = Self.append(index)
                    // Every other call stores a message without a queue entry, as a send the
                    // device took at once does.
                    let queue = index.isMultiple(of: 2) ? [entry] : []
                    return (
                        index, try await store.appendMessages([message], queue: queue, limits: limits, stats: [stat])
                    )
                }
            }
            return try await group.reduce(into: [Int: [Enqueued]]()) { $0[$1.0] = $1.1 }
        }
        #expect(try await store.messageCount(projectID: "alpha-project") == Self.calls)
        #expect(try await store.queuedCount(androidID: 42) == Self.calls / 2)
        for (index, enqueued) in answers {
            if index.isMultiple(of: 2) {
                #expect(enqueued.count == 1 && enqueued[0].stored.map(\.persistentID) == ["q\(index)"])
                #expect(enqueued[0].stored.allSatisfy { $0.sequence > 0 })
            } else {
                #expect(enqueued.isEmpty)
            }
        }
        let sequences = answers.values.flatMap { $0.flatMap(\.stored).map(\.sequence) }
        #expect(Set(sequences).count == Self.calls / 2)
        let day = CalendarDay(Timestamp(seconds: 100))
        let report = try await store.deliveryReport(projectID: "alpha-project", appID: nil, from: day, through: day)
        #expect(Self.accepted(report) == Self.calls)
    }

    @Test(arguments: Backend.allCases)
    func aConflictingAppendAmongConcurrentOnesFailsAloneAndLeavesNothing(_ backend: Backend) async throws {
        let store = try await storeWithDevice(backend)
        try await store.appendMessages([sampleMessage("taken")])
        let limits = QueueLimits(ProjectSettings())
        let failures = try await withThrowingTaskGroup(of: Int?.self) { group in
            for index in 0..<Self.calls {
                group.addTask {
                    let (message, entry, stat) = Self.append(index, messageID: index == 7 ? "taken" : nil)
                    do {
                        try await store.appendMessages([message], queue: [entry], limits: limits, stats: [stat])
                        return nil
                    } catch StoreError.conflict {
                        return index
                    }
                }
            }
            return try await group.reduce(into: [Int]()) { if let index = $1 { $0.append(index) } }
        }
        #expect(failures == [7])
        #expect(try await store.messageCount(projectID: "alpha-project") == Self.calls)
        let pending = try await store.pendingMessages(
            androidID: 42, after: 0, limit: 100, now: Timestamp(seconds: 200))
        #expect(pending.count == Self.calls - 1)
        #expect(!pending.map(\.persistentID).contains("q7"))
        let day = CalendarDay(Timestamp(seconds: 100))
        let report = try await store.deliveryReport(projectID: "alpha-project", appID: nil, from: day, through: day)
        #expect(Self.accepted(report) == Self.calls - 1)
    }
}
