/// One fact about a message as it is kept, streamed, sent to webhooks and exported
/// (SEMANTICS E1). Its sequence number orders the store's events of every project; what
/// clients see as its id is made from it by `EventIDs`, so that it tells nothing of
/// other projects.
public struct MessageEvent: Sendable, Hashable {
    /// Assigned by the store; 0 before it is stored.
    public var sequence: Int64
    public var type: MessageEventType
    /// SEMANTICS' rule id behind a collapse, expiry or drop; empty for none.
    public var reason: String
    public var projectID: String
    public var messageID: String
    /// The app the app instance belongs to; empty for an `accepted` event.
    public var appID: String
    /// The app instance's token redacted as the console shows it; empty for none.
    public var token: String
    public var analyticsLabel: String
    /// The node that wrote it.
    public var node: String
    public var at: Timestamp
    /// For `accepted`: what the message was sent to (`TargetKind`'s name and the target,
    /// a token redacted) and when its time to live runs out; empty and zero otherwise.
    public var targetKind: String
    public var target: String
    public var expiresAt: Timestamp

    public init(
        sequence: Int64 = 0, type: MessageEventType, reason: String = "", projectID: String, messageID: String,
        appID: String = "", token: String = "", analyticsLabel: String = "", node: String = "", at: Timestamp,
        targetKind: String = "", target: String = "", expiresAt: Timestamp = Timestamp(milliseconds: 0)
    ) {
        self.sequence = sequence
        self.type = type
        self.reason = reason
        self.projectID = projectID
        self.messageID = messageID
        self.appID = appID
        self.token = token
        self.analyticsLabel = analyticsLabel
        self.node = node
        self.at = at
        self.targetKind = targetKind
        self.target = target
        self.expiresAt = expiresAt
    }

    /// The event as one JSON object (the API's, the stream's, webhooks' and export's
    /// schema, docs/EVENTS.md): every field always present, times in RFC 3339 UTC and as
    /// milliseconds since 1970; `target_kind` and `target` empty and `expire_time` null
    /// but for `accepted`.
    public func json(id: String) -> JSONValue {
        .object([
            ("id", .string(id)), ("type", .string(type.rawValue)), ("project", .string(projectID)),
            ("message_id", .string(messageID)), ("app", .string(appID)), ("token", .string(token)),
            ("analytics_label", .string(analyticsLabel)), ("reason", .string(reason)), ("node", .string(node)),
            ("time", .string(at.rfc3339)), ("time_ms", .number(Double(at.milliseconds))),
            ("target_kind", .string(targetKind)), ("target", .string(target)),
            ("expire_time", type == .accepted ? .string(expiresAt.rfc3339) : .null),
        ])
    }
}
