public import HeraldCore

/// What became of every message (SEMANTICS E1–E4): its events, written by the other roles
/// in the same transactions as the facts they describe, and each message's counts.
///
/// Every method is a transaction of its own.
public protocol EventStore: Sendable {
    /// Up to `limit` of a project's events after sequence number `after` that `filter`
    /// admits, oldest first.
    func events(projectID: String, after: Int64, limit: Int, filter: EventFilter) async throws -> [MessageEvent]

    /// Up to `limit` events of every project after sequence number `after`, oldest first:
    /// what a node's one reader for all its event streams reads (`EventTail`).
    func events(after: Int64, limit: Int) async throws -> [MessageEvent]

    /// Wakes the workers of what this store's writes create (new events among them); nil for
    /// a store that does not tell, whose readers look again every little while.
    var work: WorkSignals? { get }

    /// Keeps events that come with no stored fact (`refused`), in one transaction, naming
    /// this store's node.
    func recordEvents(_ events: [MessageEvent]) async throws

    /// How long after its time an event may still appear behind events with higher sequence
    /// numbers: zero where one writer numbers events in commit order (SQLite, memory); on
    /// PostgreSQL, transactions take their numbers before they commit.
    var eventCommitLagMilliseconds: Int64 { get }

    /// The sequence number of the newest event kept; 0 for none.
    func latestEventSequence() async throws -> Int64

    /// What became of a project's message so far; nil when no event of it is kept (it never
    /// was, it is another project's, or its events are past retention).
    func messageStatus(projectID: String, messageID: String) async throws -> MessageStatus?

    /// Deletes those of the oldest `limit` events (by sequence number) that happened before
    /// `before`, and up to `limit` message counts written before it; answers how many.
    func deleteEvents(before: Timestamp, limit: Int) async throws -> Int
}

extension EventStore {
    /// `events(projectID:after:limit:filter:)` up to the first event too recent to be sure no
    /// event before it is still being committed (`eventCommitLagMilliseconds` before `now`):
    /// what a reader that remembers only the last sequence number it saw may take.
    public func settledEvents(projectID: String, after: Int64, limit: Int, filter: EventFilter, now: Timestamp)
        async throws -> [MessageEvent]
    {
        settled(try await events(projectID: projectID, after: after, limit: limit, filter: filter), now: now)
    }

    /// `events(after:limit:)` up to the first event too recent to be sure of, as above.
    public func settledEvents(after: Int64, limit: Int, now: Timestamp) async throws -> [MessageEvent] {
        settled(try await events(after: after, limit: limit), now: now)
    }

    /// The events of `found` up to the first too recent to be sure of.
    public func settled(_ found: [MessageEvent], now: Timestamp) -> [MessageEvent] {
        let lag = eventCommitLagMilliseconds
        guard lag > 0 else { return found }
        return Array(found.prefix { now.milliseconds - $0.at.milliseconds >= lag })
    }

    /// How long until the first of `found` that `settled` held back can be handed out; nil
    /// when it held none back.
    public func untilSettled(_ found: [MessageEvent], now: Timestamp) -> Duration? {
        let lag = eventCommitLagMilliseconds
        guard lag > 0, let first = found.first(where: { now.milliseconds - $0.at.milliseconds < lag }) else {
            return nil
        }
        return .milliseconds(max(1, first.at.milliseconds + lag - now.milliseconds))
    }
}
