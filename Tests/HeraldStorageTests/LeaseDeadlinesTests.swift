import Testing

@testable import HeraldStorage

/// A statement's wait for a connection ends at its deadline, checked by one loop for
/// every statement, or at once when the statement ends first (its task is cancelled).
@Suite struct LeaseDeadlinesTests {
    @Test func aWaitEndsAtTheFirstCheckAfterItsDeadlineAndNotBefore() async throws {
        let deadlines = LeaseDeadlines()
        let start = ContinuousClock.now
        async let waited: Void = deadlines.wait(until: start + .seconds(5))
        try await waitUntil { deadlines.count == 1 }
        deadlines.check(now: start + .seconds(4))
        #expect(deadlines.count == 1)
        deadlines.check(now: start + .seconds(5))
        try await waited
        #expect(deadlines.count == 0)
    }

    @Test func aCancelledWaitThrowsAtOnceAndLeavesNothingBehind() async throws {
        let deadlines = LeaseDeadlines()
        let waiting = Task { try await deadlines.wait(until: .now + .seconds(3_600)) }
        try await waitUntil { deadlines.count == 1 }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(deadlines.count == 0)

        // Cancelled before it began to wait.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await deadlines.wait(until: .now + .seconds(3_600))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
        #expect(deadlines.count == 0)
    }

    @Test func theLoopEndsWaitsWithoutAnyoneChecking() async throws {
        let deadlines = LeaseDeadlines()
        let loop = Task { await deadlines.run() }
        defer { loop.cancel() }
        let start = ContinuousClock.now
        try await deadlines.wait(until: start + .milliseconds(100))
        // Without the loop the wait would never end; the bound leaves room for the whole
        // suite's start, which has kept a task from running for 45 s under load.
        #expect(ContinuousClock.now - start < .seconds(120))
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        while !condition() { try await Task.sleep(for: .milliseconds(5)) }
    }
}
