/// How a new message joins one app instance's queue (SEMANTICS D1, D2): a pure function
/// of what the queue holds, so that every store applies exactly the same rules.
///
/// - A collapsible message replaces a stored one with the same collapse key. When the
///   queue already holds `maximumCollapseKeys` other keys, the entry with the oldest key
///   (the lowest queue position) is evicted to make room: the newest keys are kept.
/// - A non-collapsible message that would make more than `maximumPending` non-collapsible
///   messages deletes every stored message of the app instance, itself included, and
///   leaves one "messages deleted" signal counting them, which the device receives first.
public enum QueuePolicy {
    /// What the queue holds for one app instance.
    public struct Entry: Sendable, Hashable {
        public var sequence: Int64
        /// Nil for non-collapsible messages.
        public var collapseKey: String?
        /// Whether this entry is a "messages deleted" signal.
        public var isDeletionSignal: Bool
        /// For a signal: how many messages it reports.
        public var deletedCount: Int

        public init(sequence: Int64, collapseKey: String?, isDeletionSignal: Bool = false, deletedCount: Int = 0) {
            self.sequence = sequence
            self.collapseKey = collapseKey
            self.isDeletionSignal = isDeletionSignal
            self.deletedCount = deletedCount
        }
    }

    /// What the store must do.
    public struct Decision: Sendable, Equatable {
        /// Entries to delete, by sequence.
        public var delete: [Int64] = []
        /// Whether to store the new message.
        public var store = true
        /// Messages replaced by a newer one with the same collapse key.
        public var collapsed = 0
        /// Messages dropped because the queue overflowed (D1) or the key limit was reached (D2).
        public var droppedTooManyPending = 0
        /// When set, store a "messages deleted" signal with this count (replacing any earlier one).
        public var deletionSignal: Int?

        public init() {}
    }

    /// Decides how a message with `collapseKey` (nil when non-collapsible) joins `queue`.
    public static func admit(
        collapseKey: String?, into queue: [Entry], maximumPending: Int, maximumCollapseKeys: Int
    ) -> Decision {
        var decision = Decision()
        let messages = queue.filter { !$0.isDeletionSignal }
        if let collapseKey {
            let replaced = messages.filter { $0.collapseKey == collapseKey }
            decision.delete = replaced.map(\.sequence)
            decision.collapsed = replaced.count
            let otherKeys = messages.compactMap(\.collapseKey).filter { $0 != collapseKey }
            var distinct: [String] = []
            for key in otherKeys where !distinct.contains(key) { distinct.append(key) }
            if distinct.count >= maximumCollapseKeys {
                // Keys in order of their oldest entry; evict the oldest until there is room.
                let evicted = distinct.prefix(distinct.count - maximumCollapseKeys + 1)
                let dropped = messages.filter { $0.collapseKey.map(evicted.contains) ?? false }
                decision.delete += dropped.map(\.sequence)
                decision.droppedTooManyPending += dropped.count
            }
            return decision
        }
        let pending = messages.filter { $0.collapseKey == nil }.count
        guard pending + 1 > maximumPending else { return decision }
        let earlierSignal = queue.filter(\.isDeletionSignal).reduce(0) { $0 + $1.deletedCount }
        decision.delete = queue.map(\.sequence)
        decision.store = false
        decision.droppedTooManyPending = messages.count + 1
        decision.deletionSignal = earlierSignal + messages.count + 1
        return decision
    }

    /// A message discarded without being stored (an inactive device, SEMANTICS L5) leaves
    /// a "messages deleted" signal, added to any the queue already holds.
    public static func admitDiscarded(count: Int, into queue: [Entry]) -> Decision {
        var decision = Decision()
        let signals = queue.filter(\.isDeletionSignal)
        decision.delete = signals.map(\.sequence)
        decision.store = false
        decision.deletionSignal = signals.reduce(count) { $0 + $1.deletedCount }
        return decision
    }
}
