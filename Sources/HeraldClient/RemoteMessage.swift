public import HeraldCore

/// A message as the app receives it.
public struct RemoteMessage: Sendable, Equatable {
    /// The message id (the last part of the name the send returned).
    public var messageID: String
    /// The id the device acknowledges it by.
    public var persistentID: String
    /// The sender id.
    public var from: String
    public var collapseKey: String?
    public var data: [String: String]
    /// Notification fields (title, body, image and platform keys), when it is a notification message.
    public var notification: [String: String]?
    /// When the server accepted it.
    public var sentTime: Timestamp?
    /// `high` or `normal`.
    public var priority: String?
    /// The message as the platform delivered it: the `app_data` pairs for native
    /// registrations, the decrypted JSON for web ones.
    public var platformPayload: JSONValue
}

/// What a device's app is told.
public enum ClientEvent: Sendable, Equatable {
    /// A message.
    case message(RemoteMessage)
    /// The server dropped stored messages (SEMANTICS D1): ask the app server for a full sync.
    case deletedMessages(count: Int)
    /// A Web Push message to the device's subscription, decrypted (RFC 8291).
    case pushMessage(id: String, payload: [UInt8])
    /// An upstream message reached the server, which keeps it for the app server.
    case sent(messageID: String)
    /// An upstream message was not sent (`UpstreamError`'s names: refused, or no app server
    /// took it within its time to live).
    case sendError(messageID: String, reason: String)
    /// A connection to the gateway could not be made, or ended; the client tries again.
    case disconnected(ConnectionFailure)
}
