/// The per-message limits a project applies when it validates a send.
public struct MessageLimits: Sendable, Hashable, Codable {
    /// The largest payload in bytes (SEMANTICS M2). Default 4096.
    public var maximumPayloadBytes: Int
    /// The largest payload for a topic or condition send. Default 2048.
    public var maximumTopicPayloadBytes: Int
    /// The longest time to live in seconds (SEMANTICS D5). Default 2,419,200 (28 days).
    public var maximumTTLSeconds: Int64
    /// The most topics a condition may name. Default 5.
    public var maximumConditionTopics: Int

    public init(
        maximumPayloadBytes: Int = 4096,
        maximumTopicPayloadBytes: Int = 2048,
        maximumTTLSeconds: Int64 = 2_419_200,
        maximumConditionTopics: Int = 5
    ) {
        self.maximumPayloadBytes = maximumPayloadBytes
        self.maximumTopicPayloadBytes = maximumTopicPayloadBytes
        self.maximumTTLSeconds = maximumTTLSeconds
        self.maximumConditionTopics = maximumConditionTopics
    }
}
