public import HeraldCore

/// A queue entry claimed for its hand-off, with where it goes.
public struct HandOff: Sendable, Hashable {
    /// The push service an entry is handed to.
    public enum Destination: Sendable, Hashable {
        /// Apple's, at the app instance's APNs address (SEMANTICS A1).
        case apns(APNsAddress)
        /// Google's FCM, to the entry's token: a token Herald did not issue (SEMANTICS R1).
        case fcm
        /// A browser's push service, at the registration's endpoint (SEMANTICS W2).
        case webPush(endpoint: String)
    }

    public var entry: QueuedMessage
    public var destination: Destination

    public init(entry: QueuedMessage, destination: Destination) {
        self.entry = entry
        self.destination = destination
    }

    /// The APNs address, for an entry handed to APNs.
    public var apns: APNsAddress? {
        if case .apns(let address) = destination { address } else { nil }
    }

    /// The destination a registration's hand-off column (`Registration.handOffColumn`) names.
    static func destination(column: String) -> Destination? {
        if column == Registration.fcmColumn { return .fcm }
        if column.hasPrefix("https://") { return .webPush(endpoint: column) }
        return APNsAddress(tuple: column).map(Destination.apns)
    }
}
