/// What became of one message so far (the status API, the console's message page): what
/// it was sent to, and how many of its app instances each outcome reached.
public struct MessageStatus: Sendable, Hashable {
    /// Whether the message is still on its way.
    public enum State: String, Sendable, Hashable {
        /// Some app instance may still get it.
        case delivering
        /// Every app instance it was for has an outcome.
        case done
        /// Its time to live passed before every app instance got it.
        case expired
    }

    /// Its `accepted` event: the target, when, and until when.
    public var accepted: MessageEvent
    /// How many app instances each outcome reached.
    public var counts: [MessageEventType: Int]
    /// How many app instances a topic, condition or group message was planned for so far,
    /// and whether its fanout has finished; nil for a message to one app instance.
    public var fanout: (reached: Int, finished: Bool)?

    public init(accepted: MessageEvent, counts: [MessageEventType: Int], fanout: (reached: Int, finished: Bool)?) {
        self.accepted = accepted
        self.counts = counts
        self.fanout = fanout
    }

    public static func == (lhs: MessageStatus, rhs: MessageStatus) -> Bool {
        lhs.accepted == rhs.accepted && lhs.counts == rhs.counts && lhs.fanout?.reached == rhs.fanout?.reached
            && lhs.fanout?.finished == rhs.fanout?.finished
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(accepted)
        hasher.combine(counts)
    }

    public subscript(type: MessageEventType) -> Int { counts[type] ?? 0 }

    /// App instances it was for.
    public var instances: Int { fanout?.reached ?? 1 }

    /// App instances with an outcome that ends their part: delivered, handed off, collapsed,
    /// expired, dropped or unregistered.
    public var settled: Int {
        [.delivered, .handedOff, .collapsed, .expired, .dropped, .unregistered].reduce(0) { $0 + self[$1] }
    }

    /// App instances still waiting for it.
    public var waiting: Int { max(0, instances - settled) }

    /// The state at `now`: while its time to live runs, delivering as long as its fanout
    /// runs or an app instance waits, done after; once it has passed, expired when an app
    /// instance never got it, done otherwise.
    public func state(now: Timestamp) -> State {
        if now < accepted.expiresAt { return fanout?.finished == false || waiting > 0 ? .delivering : .done }
        return waiting > 0 || self[.expired] > 0 ? .expired : .done
    }
}
