public import HeraldCore

/// A downstream message an app server sent on its XMPP connection, read and waiting to be
/// accepted: its `message_id`, the recipient its ack names, and the legacy request it is.
public struct XMPPDownstream: Sendable, Equatable {
    public var messageID: String
    /// `to` or `condition` as the app server wrote it: the `from` of the ack.
    public var recipient: String
    /// The v1 target field and value the message goes to.
    public var target: (field: String, value: String)
    public var request: LegacySendRequest
    public var receiptRequested: Bool

    public static func == (lhs: XMPPDownstream, rhs: XMPPDownstream) -> Bool {
        lhs.messageID == rhs.messageID && lhs.recipient == rhs.recipient && lhs.target == rhs.target
            && lhs.request == rhs.request && lhs.receiptRequested == rhs.receiptRequested
    }
}
