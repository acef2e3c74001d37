public import HeraldCore

/// What became of every message (SEMANTICS E1–E4): its events, written by the other roles
/// in the same transactions as the facts they describe, and each message's counts.
///
/// Every method is a transaction of its own.
public protocol EventStore: Sendable {
    /// Up to `limit` of a project's events after sequence number `after` that `filter`
    /// admits, oldest first.
    func events(projectID: String, after: Int64, limit: Int, filter: EventFilter) async throws -> [MessageEvent]

    /// The sequence number of the newest event kept; 0 for none.
    func latestEventSequence() async throws -> Int64

    /// What became of a project's message so far; nil when no event of it is kept (it never
    /// was, it is another project's, or its events are past retention).
    func messageStatus(projectID: String, messageID: String) async throws -> MessageStatus?

    /// Deletes up to `limit` events, and message counts, written before `before`; answers how many.
    func deleteEvents(before: Timestamp, limit: Int) async throws -> Int
}
