/// How one entry joined its queue: the policy's decision and the rows stored for it, with
/// their sequence numbers (the message, then any "messages deleted" signal).
public struct Enqueued: Sendable {
    public var decision: QueuePolicy.Decision
    public var stored: [QueuedMessage]

    public init(decision: QueuePolicy.Decision, stored: [QueuedMessage]) {
        self.decision = decision
        self.stored = stored
    }
}
