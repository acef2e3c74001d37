/// What a message was sent to, as the store keeps it (`messages.target_kind`).
public enum TargetKind: String, Sendable, Hashable, CaseIterable {
    /// A registration token (or a device group's notification key, sent as a token).
    case token
    /// An installation id (the v1 API's `fid`).
    case fid
    case topic
    case condition

    /// The kind a row names; a row never holds another (the column is written from this type only).
    init(stored: String) {
        self = TargetKind(rawValue: stored) ?? .token
    }
}
