public import HeraldCore

/// The app instance a one-to-one send goes to, read with what the send needs besides its
/// registration: when its device last connected (SEMANTICS L5) and how many messages went
/// to it lately (T6, counted over every node). A shared store reads all three in one round
/// trip; a store that would read them apart leaves them unknown (nil), and the sender reads
/// them where it needs them.
public struct Recipient: Sendable {
    public var registration: Registration
    /// The device's last connection: nil when not read, `.some(nil)` when it never connected.
    public var lastConnectedAt: Timestamp??
    /// The messages stored for the app instance (its token or installation id) in the minute
    /// and the hour before the send; nil when not counted.
    public var recent: RecentMessages?

    public init(registration: Registration, lastConnectedAt: Timestamp?? = nil, recent: RecentMessages? = nil) {
        self.registration = registration
        self.lastConnectedAt = lastConnectedAt
        self.recent = recent
    }
}
