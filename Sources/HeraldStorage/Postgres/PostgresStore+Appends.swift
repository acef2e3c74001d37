public import HeraldCore
import PostgresNIO

/// Group commit of accepted messages (`QueueStore.appendMessages`): the calls that arrive on
/// this node while a batch is being written wait, and are written together as the next
/// batch, merged into the same multi-row statements one call would use. A batch that stores
/// no queue entry (the device took its message at once, or there is none) is one statement
/// and no transaction around it; one that does is the four statements of `enqueue` between
/// `BEGIN` and `COMMIT`, whatever the batch's size.
///
/// No call is answered before the commit that makes it durable. When a merged batch fails
/// for anything but the database being unavailable (a message id or persistent id taken,
/// say), its calls are written again one by one, so that only the one at fault fails.
extension PostgresStore {
    public func appendMessages(
        _ messages: [StoredMessage], queue: [QueuedMessage], limits: QueueLimits, stats: [DeliveryStat]
    ) async throws -> [Enqueued] {
        let append = QueueAppend(messages: messages, queue: queue, limits: limits, stats: stats)
        return try await appends.submit(append) { batch in await self.write(batch) }
    }

    /// Writes a batch; answers each of its calls. When the writing caller's task was
    /// cancelled before anything was written, it alone fails: the others' calls are given
    /// back for the next batch.
    private func write(_ batch: [QueueAppend]) async -> [Result<[Enqueued], any Error>?] {
        do {
            return try await writeTogether(batch).map { .success($0) }
        } catch is CancellationError {
            return [.failure(CancellationError())] + batch.dropFirst().map { _ in nil }
        } catch StoreError.unavailable(let reason) {
            return batch.map { _ in .failure(StoreError.unavailable(reason)) }
        } catch {
            guard batch.count > 1 else { return [.failure(error)] }
            var answers: [Result<[Enqueued], any Error>?] = []
            for append in batch {
                do {
                    answers.append(.success(try await writeTogether([append])[0]))
                } catch {
                    answers.append(.failure(error))
                }
            }
            return answers
        }
    }

    /// Writes `batch` in one statement or transaction; answers each call's outcomes.
    private func writeTogether(_ batch: [QueueAppend]) async throws -> [[Enqueued]] {
        let messages = batch.flatMap(\.messages)
        let stats = batch.flatMap(\.stats)
        guard batch.contains(where: { !$0.queue.isEmpty }) else {
            var binds = PostgresBindings()
            let sql = """
                WITH inserted AS (\(Self.insertion(of: messages, &binds))),
                    accepted AS (\(Self.insertion(of: messages.compactMap { EventRows.accepted($0, node: self.nodeID) }, &binds))),
                    counted AS (\(Self.counting(stats, &binds))),
                    \(self.eventWriting(stats, &binds))
                SELECT 1
                """
            try await run(PostgresQuery(unsafeSQL: sql, binds: binds), prepared: true)
            created([.events])
            return batch.map { _ in [] }
        }
        // Calls with other queue limits (other projects' settings) are planned apart.
        var groups: [QueueLimits: [Int]] = [:]
        for index in batch.indices { groups[batch[index].limits, default: []].append(index) }
        return try await transaction { connection in
            var outcomes = batch.map { _ in [Enqueued]() }
            var first = true
            for (limits, members) in groups {
                let enqueued = try await self.enqueue(
                    members.flatMap { batch[$0].queue }, limits: limits, stats: members.flatMap { batch[$0].stats },
                    messages: first ? messages : [], on: connection)
                first = false
                var next = enqueued[...]
                for index in members {
                    outcomes[index] = Array(next.prefix(batch[index].queue.count))
                    next = next.dropFirst(batch[index].queue.count)
                }
            }
            return outcomes
        }
    }
}
