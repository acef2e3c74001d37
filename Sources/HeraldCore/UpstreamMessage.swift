/// Something a device's project's app servers are to receive on their XMPP connections
/// (reference §6): a device's upstream message, or the delivery receipt of a downstream
/// message that asked for one. It waits in the store until an app server acknowledges it,
/// or until its time to live runs out.
public struct UpstreamMessage: Sendable, Hashable {
    public enum Kind: String, Sendable, Hashable {
        /// A message the device sent to its app server.
        case message
        /// `MESSAGE_SENT_TO_DEVICE`: the device acknowledged a downstream message.
        case receipt
    }

    /// The store's position, which orders a project's messages; 0 before it is stored.
    public var sequence: Int64
    public var projectID: String
    public var kind: Kind
    /// The id the app server acknowledges it by: the device's message id, or `dr2:` and
    /// the downstream message's id for a receipt.
    public var messageID: String
    /// The registration token of the device it is from (or about).
    public var token: String
    /// The device's app (the `category` the app server sees).
    public var category: String
    public var androidID: UInt64
    /// The data the device sent; empty for a receipt.
    public var data: [(key: String, value: String)]
    /// When it was received (a message) or when the device acknowledged (a receipt).
    public var createdAt: Timestamp
    public var expiresAt: Timestamp

    /// The prefix of a receipt's id (FCM's receipts are named so).
    public static let receiptPrefix = "dr2:"
    /// How long a receipt waits for an app server: four weeks, the longest time to live.
    public static let receiptLifetimeSeconds: Int64 = 2_419_200
    /// An upstream message's time to live when the device names none: a day.
    public static let defaultTTLSeconds: Int64 = 86_400
    /// The most data an upstream message carries, keys and values counted (FCM's 4 KB).
    public static let maximumDataBytes = 4096
    /// The most upstream messages one device may have waiting for app servers: past it, a
    /// device whose app servers do not take its messages cannot fill the store.
    public static let maximumWaitingPerDevice = 1000
    /// The longest message id a device may give an upstream message: ids are the app's
    /// short names for its messages, and every waiting message keeps its own.
    public static let maximumMessageIDBytes = 256

    public init(
        sequence: Int64 = 0, projectID: String, kind: Kind, messageID: String, token: String, category: String,
        androidID: UInt64, data: [(key: String, value: String)] = [], createdAt: Timestamp, expiresAt: Timestamp
    ) {
        self.sequence = sequence
        self.projectID = projectID
        self.kind = kind
        self.messageID = messageID
        self.token = token
        self.category = category
        self.androidID = androidID
        self.data = data
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// The receipt of a downstream message the device acknowledged at `at`.
    public static func receipt(
        projectID: String, originalMessageID: String, token: String, category: String, androidID: UInt64,
        at: Timestamp
    ) -> UpstreamMessage {
        UpstreamMessage(
            projectID: projectID, kind: .receipt, messageID: receiptPrefix + originalMessageID, token: token,
            category: category, androidID: androidID, createdAt: at,
            expiresAt: at.adding(seconds: receiptLifetimeSeconds))
    }

    /// The data as a JSON object's text, as the store keeps it.
    public var dataJSON: String {
        JSONValue.object(data.map { (key: $0.key, value: .string($0.value)) }).rendered
    }

    /// Data read back from `dataJSON`.
    public static func data(fromJSON text: String) -> [(key: String, value: String)] {
        guard !text.isEmpty, case .object(let members)? = try? JSONParser.parse(Array(text.utf8)) else { return [] }
        return members.compactMap { member in member.value.stringValue.map { (key: member.key, value: $0) } }
    }

    /// The JSON an app server receives (reference §6): an upstream message with its
    /// `category`, `data`, `message_id` and `from`; a receipt with `message_type` `receipt`
    /// and the status, original message id, token and time in its data.
    public var appServerJSON: JSONValue {
        switch kind {
        case .message:
            return .object([
                ("category", .string(category)),
                ("data", .object(data.map { (key: $0.key, value: .string($0.value)) })),
                ("message_id", .string(messageID)), ("from", .string(token)),
            ])
        case .receipt:
            return .object([
                ("category", .string(category)),
                (
                    "data",
                    .object([
                        ("message_status", .string("MESSAGE_SENT_TO_DEVICE")),
                        ("original_message_id", .string(String(messageID.dropFirst(Self.receiptPrefix.count)))),
                        ("device_registration_id", .string(token)),
                        ("message_sent_timestamp", .string(String(createdAt.milliseconds))),
                    ])
                ),
                ("message_id", .string(messageID)), ("message_type", .string("receipt")),
                ("time_to_live", .number(0)), ("from", .string("gcm.googleapis.com")),
            ])
        }
    }

    public static func == (lhs: UpstreamMessage, rhs: UpstreamMessage) -> Bool {
        lhs.sequence == rhs.sequence && lhs.projectID == rhs.projectID && lhs.kind == rhs.kind
            && lhs.messageID == rhs.messageID && lhs.token == rhs.token && lhs.category == rhs.category
            && lhs.androidID == rhs.androidID && lhs.data.elementsEqual(rhs.data, by: { $0 == $1 })
            && lhs.createdAt == rhs.createdAt && lhs.expiresAt == rhs.expiresAt
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(projectID)
        hasher.combine(kind)
        hasher.combine(messageID)
        hasher.combine(token)
    }
}
