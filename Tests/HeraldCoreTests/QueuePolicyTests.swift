import HeraldCore
import Testing

@Suite struct QueuePolicyTests {
    func entries(_ keys: [String?]) -> [QueuePolicy.Entry] {
        keys.enumerated().map { QueuePolicy.Entry(sequence: Int64($0.offset + 1), collapseKey: $0.element) }
    }

    @Test func D1_aHundredNonCollapsibleMessagesAreKept() {
        let decision = QueuePolicy.admit(
            collapseKey: nil, into: entries(Array(repeating: nil, count: 99)), maximumPending: 100,
            maximumCollapseKeys: 4)
        #expect(decision == QueuePolicy.Decision())
    }

    @Test func D1_theHundredAndFirstDeletesEverythingAndLeavesOneSignal() {
        let queue = entries(Array(repeating: nil, count: 100) + ["k"])
        let decision = QueuePolicy.admit(collapseKey: nil, into: queue, maximumPending: 100, maximumCollapseKeys: 4)
        #expect(!decision.store)
        #expect(decision.delete == queue.map(\.sequence))
        #expect(decision.deletionSignal == 102)
        #expect(decision.droppedTooManyPending == 102)
    }

    @Test func D1_aLaterOverflowAddsToTheUndeliveredSignal() {
        var queue = entries(Array(repeating: nil, count: 3))
        queue.append(QueuePolicy.Entry(sequence: 9, collapseKey: nil, isDeletionSignal: true, deletedCount: 50))
        let decision = QueuePolicy.admit(collapseKey: nil, into: queue, maximumPending: 3, maximumCollapseKeys: 4)
        #expect(decision.deletionSignal == 54)
        #expect(decision.delete.contains(9))
    }

    @Test func D1_collapsibleMessagesDoNotCountTowardsTheLimit() {
        let decision = QueuePolicy.admit(
            collapseKey: nil, into: entries([nil, "a", "b", "c"]), maximumPending: 2, maximumCollapseKeys: 4)
        #expect(decision.store)
        #expect(decision.delete.isEmpty)
    }

    @Test func D2_aNewerMessageReplacesTheOneWithTheSameKey() {
        let decision = QueuePolicy.admit(
            collapseKey: "score", into: entries([nil, "score", "other"]), maximumPending: 100, maximumCollapseKeys: 4)
        #expect(decision.store)
        #expect(decision.delete == [2])
        #expect(decision.collapsed == 1)
    }

    @Test func D2_aFifthKeyEvictsTheOldestKey() {
        let decision = QueuePolicy.admit(
            collapseKey: "e", into: entries(["a", "b", nil, "c", "a", "d"]), maximumPending: 100, maximumCollapseKeys: 4
        )
        #expect(decision.store)
        #expect(decision.delete == [1, 5])
        #expect(decision.droppedTooManyPending == 2)
        #expect(decision.collapsed == 0)
    }

    @Test func D2_anExistingKeyNeedsNoRoom() {
        let decision = QueuePolicy.admit(
            collapseKey: "b", into: entries(["a", "b", "c", "d"]), maximumPending: 100, maximumCollapseKeys: 4)
        #expect(decision.delete == [2])
        #expect(decision.droppedTooManyPending == 0)
    }

    @Test func D2_theKeyLimitIsASetting() {
        let decision = QueuePolicy.admit(
            collapseKey: "c", into: entries(["a", "b"]), maximumPending: 100, maximumCollapseKeys: 1)
        #expect(decision.delete == [1, 2])
    }
}
