/// A message a device sent to its app server on its MCS connection (a `DataMessageStanza`
/// addressed to `<sender id>@fcm.googleapis.com`), as read and before it is checked.
public struct UpstreamRequest: Sendable, Hashable {
    /// The device's id for it, which the app server acknowledges and a send error names.
    public var messageID: String
    /// Where it goes: `<sender id>@fcm.googleapis.com`.
    public var to: String
    /// The app that sent it.
    public var category: String
    /// The registration token it is sent from; empty to find it by the app and sender.
    public var token: String
    /// Seconds it may wait for an app server; nil for the default, a day.
    public var ttlSeconds: Int64?
    public var data: [String: String]

    public init(
        messageID: String, to: String, category: String, token: String = "", ttlSeconds: Int64? = nil,
        data: [String: String]
    ) {
        self.messageID = messageID
        self.to = to
        self.category = category
        self.token = token
        self.ttlSeconds = ttlSeconds
        self.data = data
    }

    /// The domain of the address upstream messages go to.
    public static let domain = "fcm.googleapis.com"

    /// The sender id `to` names, if it is `<number>@fcm.googleapis.com` (or gcm).
    public var senderID: Int64? {
        let parts = to.split(separator: "@", maxSplits: 1)
        guard parts.count == 2, [Self.domain, "gcm.googleapis.com"].contains(String(parts[1])) else { return nil }
        return Int64(parts[0])
    }

    /// The bytes of the data's keys and values, which the 4 KB limit counts.
    public var dataBytes: Int {
        data.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
    }
}

/// Why an upstream message was not sent, with the names a device's `send_error` carries
/// (the Android SDK reads them into its send exception's codes).
public enum UpstreamError: String, Sendable, Hashable, Error {
    /// No message id or one longer than `UpstreamMessage.maximumMessageIDBytes`, a `to` that
    /// is not the project's sender id, or a token that is not the device's.
    case invalidParameters = "InvalidParameters"
    /// More than 4 KB of data.
    case messageTooBig = "MessageTooBig"
    /// Past the project's or the device's upstream limit (SEMANTICS T5), or the device has
    /// `UpstreamMessage.maximumWaitingPerDevice` messages no app server has taken yet, or
    /// the project its `upstream-waiting`.
    case tooManyMessages = "TooManyMessages"
    /// No app server acknowledged it within its time to live, or it could not be kept.
    case serviceNotAvailable = "SERVICE_NOT_AVAILABLE"
}
