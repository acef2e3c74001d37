/// What became of a message (SEMANTICS E1), as events and webhooks name it.
public enum MessageEventType: String, Sendable, Hashable, CaseIterable, Codable {
    /// Accepted from its sender: one event a message.
    case accepted
    /// Acknowledged by the app instance, or handed to its browser's push service.
    case delivered
    /// Taken by the push service that reaches the app instance: APNs (SEMANTICS A3), or FCM
    /// for a token Herald did not issue (R3). Counted as delivered in the delivery data.
    case handedOff = "handed_off"
    /// The app instance showed its notification.
    case impression
    /// The user opened its notification.
    case opened
    /// Replaced in the device's queue by a newer message with its collapse key.
    case collapsed
    /// Its time to live passed before the app instance took it.
    case expired
    /// Discarded: the device's queue overflowed ("messages deleted"), the device is inactive,
    /// or the push service it was handed to refused it for good.
    case dropped
    /// Its app instance was unregistered while it waited.
    case unregistered
    /// A send refused for a quota, with the rule's id as its reason: no message was
    /// accepted, so it names none.
    case refused

    /// The event a delivery counter stands for, and why; nil for `accepted`, whose event comes
    /// with the stored message, and for counters that are no message's.
    public init?(_ counter: DeliveryCounter) {
        switch counter {
        case .delivered: self = .delivered
        case .collapsed: self = .collapsed
        case .expired: self = .expired
        case .droppedTooManyPending, .droppedDeviceInactive, .droppedRefused: self = .dropped
        case .unregistered: self = .unregistered
        case .opened: self = .opened
        case .impressions: self = .impression
        case .accepted, .throttled: return nil
        }
    }

    /// The types a message's status counts: what can become of an accepted message.
    public static let outcomes: [MessageEventType] = allCases.filter { $0 != .accepted && $0 != .refused }

    /// The SEMANTICS rule a quota refusal's subject (`HeraldError.quotaSubject`) names:
    /// T1 downstream messages, T3 fanouts, T6 messages to one device; nil for other quotas.
    public static func rule(ofQuota subject: String) -> String? {
        if subject.hasSuffix("/downstream-per-minute") { return "T1" }
        if subject == "fanouts" { return "T3" }
        if subject.hasSuffix("/device") { return "T6" }
        return nil
    }

    /// Why a counter's event happened, where its type alone does not say: SEMANTICS' rule id,
    /// or for a push service's refusal, that.
    public static func reason(_ counter: DeliveryCounter) -> String {
        switch counter {
        case .droppedTooManyPending: "D1"
        case .droppedDeviceInactive: "L5"
        case .droppedRefused: "refused by its push service"
        case .collapsed: "D2"
        case .expired: "D5"
        default: ""
        }
    }
}
