import Synchronization
import Testing

@testable import HeraldStorage

@Suite struct BatchedCallsTests {
    /// Calls that arrive while a batch runs wait for the next; one a batch gives back runs in
    /// the batch after, and every call gets its own answer.
    @Test func callsWaitForTheNextBatchAndCallsGivenBackRunInTheOneAfter() async throws {
        let calls = BatchedCalls<Int, Int>(maximumBatch: 64)
        let sizes = Mutex<[Int]>([])
        let run: @Sendable ([Int]) async -> [Result<Int, any Error>?] = { batch in
            sizes.withLock { $0.append(batch.count) }
            if batch == [0] {
                // The first batch runs until the four others wait.
                while calls.waiting < 4 { try? await Task.sleep(for: .milliseconds(1)) }
                return [.success(0)]
            }
            if batch.count == 4 { return [.success(batch[0] * 10)] + batch.dropFirst().map { _ in nil } }
            return batch.map { .success($0 * 10) }
        }
        async let first = calls.submit(0, run: run)
        while sizes.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(1)) }
        let answers = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for call in 1...4 { group.addTask { (call, try await calls.submit(call, run: run)) } }
            return try await group.reduce(into: [Int: Int]()) { $0[$1.0] = $1.1 }
        }
        #expect(try await first == 0)
        #expect(answers == [1: 10, 2: 20, 3: 30, 4: 40])
        #expect(sizes.withLock { $0 } == [1, 4, 3])
        #expect(calls.batches.load(ordering: .relaxed) == 3 && calls.waiting == 0)
    }
}
