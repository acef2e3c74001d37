/// How a batch of entries joins their app instances' queues (SEMANTICS D1, D2): a pure
/// plan that every store backend feeds with the rows its queues hold and then applies.
///
/// The backend reads the pending rows of the batch's devices, builds the plan, deletes
/// `deletes`, inserts `inserts` in order, and answers `enqueued(sequences:)` with the
/// sequence numbers the insertions got. Each entry sees what the entries before it did:
/// a row that a later entry of the batch replaces is never inserted.
public struct QueueBatchPlan {
    /// A message in one device's queue; persistent ids are unique per device.
    public struct DeviceMessage: Hashable, Sendable {
        public var androidID: UInt64
        public var persistentID: String

        public init(androidID: UInt64, persistentID: String) {
            self.androidID = androidID
            self.persistentID = persistentID
        }
    }

    /// Stored rows to delete, by sequence.
    public private(set) var deletes: [Int64] = []
    /// Rows to insert, in order. Their `sequence` is a stand-in until the backend numbers them.
    public private(set) var inserts: [QueuedMessage] = []
    /// The counters to add: the batch's own and what the decisions collapsed or dropped.
    public private(set) var stats: [DeliveryStat]
    /// Each entry's decision, in entry order.
    private var decisions: [QueuePolicy.Decision] = []
    /// Each entry's rows, as positions in `inserts`.
    private var rows: [[Int]] = []

    /// Sequence numbers above every stored row's, given to the batch's rows until inserted.
    private static let standIn = Int64.max / 2

    /// Plans `entries` against `current`, the pending rows of their devices in sequence
    /// order (rows of other devices, or of a device's other tokens, are ignored). `taken`
    /// holds the persistent ids already stored for these devices, or at least those equal to
    /// an entry's. Throws `Conflict` when a row would repeat one.
    public init(
        _ entries: [QueuedMessage], current: [QueuedMessage], taken: Set<DeviceMessage>, limits: QueueLimits,
        stats: [DeliveryStat]
    ) throws(Conflict) {
        self.stats = stats
        var queues: [UInt64: [QueuedMessage]] = [:]
        for row in current { queues[row.androidID, default: []].append(row) }
        var taken = taken
        var dropped: Set<Int> = []
        var nextStandIn = Self.standIn
        decisions.reserveCapacity(entries.count)
        rows.reserveCapacity(entries.count)
        for index in entries.indices {
            let entry = entries[index]
            let device = queues[entry.androidID] ?? []
            let queue = device.filter { $0.token == entry.token }
            let admission = QueueAdmission(entry, current: queue, limits: limits)
            let deleted = admission.decision.delete
            if !deleted.isEmpty {
                for sequence in deleted {
                    if sequence < Self.standIn {
                        deletes.append(sequence)
                    } else {
                        dropped.insert(Int(sequence - Self.standIn - 1))
                    }
                }
                queues[entry.androidID]?.removeAll { deleted.contains($0.sequence) }
            }
            var positions: [Int] = []
            for var row in admission.inserts {
                guard taken.insert(DeviceMessage(androidID: row.androidID, persistentID: row.persistentID)).inserted
                else { throw Conflict(persistentID: row.persistentID) }
                nextStandIn += 1
                row.sequence = nextStandIn
                positions.append(inserts.count)
                inserts.append(row)
                queues[entry.androidID, default: []].append(row)
            }
            self.stats += admission.stats
            decisions.append(admission.decision)
            rows.append(positions)
        }
        if !dropped.isEmpty { removeInserts(dropped) }
    }

    /// Takes out rows that a later entry of the batch replaced, renumbering the others' positions.
    private mutating func removeInserts(_ dropped: Set<Int>) {
        var position = Array(repeating: -1, count: inserts.count)
        var kept: [QueuedMessage] = []
        for index in inserts.indices where !dropped.contains(index) {
            position[index] = kept.count
            kept.append(inserts[index])
        }
        inserts = kept
        rows = rows.map { $0.compactMap { position[$0] >= 0 ? position[$0] : nil } }
    }

    /// How each entry joined its queue, given the sequence numbers of `inserts` in order.
    public func enqueued(sequences: [Int64]) -> [Enqueued] {
        precondition(sequences.count == inserts.count, "one sequence per inserted row")
        return decisions.indices.map { index in
            Enqueued(
                decision: decisions[index],
                stored: rows[index].map { position in
                    var row = inserts[position]
                    row.sequence = sequences[position]
                    return row
                })
        }
    }

    /// A row would repeat a persistent id its device already has.
    public struct Conflict: Error, Sendable, Equatable {
        public var persistentID: String

        public init(persistentID: String) {
            self.persistentID = persistentID
        }
    }
}
