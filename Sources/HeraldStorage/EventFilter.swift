public import HeraldCore

/// Which events a reader wants (the stream's and the API's filters, export's window).
public struct EventFilter: Sendable, Hashable {
    /// Only this message's; nil for every message.
    public var messageID: String?
    /// Only events of messages with this analytics label; nil for any.
    public var analyticsLabel: String?
    /// Only these types; empty for every type.
    public var types: Set<MessageEventType>
    /// Only events at or after `since` and before `until`.
    public var since: Timestamp?
    public var until: Timestamp?

    public init(
        messageID: String? = nil, analyticsLabel: String? = nil, types: Set<MessageEventType> = [],
        since: Timestamp? = nil, until: Timestamp? = nil
    ) {
        self.messageID = messageID
        self.analyticsLabel = analyticsLabel
        self.types = types
        self.since = since
        self.until = until
    }

    /// Whether `event` passes the filter.
    public func admits(_ event: MessageEvent) -> Bool {
        (messageID == nil || event.messageID == messageID)
            && (analyticsLabel == nil || event.analyticsLabel == analyticsLabel)
            && (types.isEmpty || types.contains(event.type)) && (since.map { event.at >= $0 } ?? true)
            && (until.map { event.at < $0 } ?? true)
    }
}
