public import HeraldCore

/// An app server's endpoint that receives a project's events (SEMANTICS E5): where it
/// is, what it signs with, which events it wants, and how far it has got.
public struct Webhook: Sendable, Hashable {
    public enum State: String, Sendable, Hashable {
        /// Events go to it as they come.
        case active
        /// It kept failing for `Webhook.retryWindowSeconds`: nothing goes to it until an
        /// operator resumes it, then it carries on from `cursor`.
        case paused
    }

    /// Its id, unguessable (`wh_…`).
    public var id: String
    public var projectID: String
    /// Where events are posted.
    public var url: String
    /// The signing secret (`whsec_…`), shown once when it is added.
    public var secret: String
    /// The event types it wants; empty for every type.
    public var types: Set<MessageEventType>
    public var state: State
    /// The sequence number of the last event it took.
    public var cursor: Int64
    /// Failed attempts in a row at the event after `cursor`.
    public var failures: Int
    /// When that event first failed; nil while nothing fails.
    public var failingSince: Timestamp?
    /// When it is next tried.
    public var nextAttemptAt: Timestamp
    /// The last errors, newest last (at most `Webhook.errorsKept`).
    public var lastErrors: [String]
    public var createdAt: Timestamp

    public init(
        id: String, projectID: String, url: String, secret: String, types: Set<MessageEventType> = [],
        state: State = .active, cursor: Int64, failures: Int = 0, failingSince: Timestamp? = nil,
        nextAttemptAt: Timestamp, lastErrors: [String] = [], createdAt: Timestamp
    ) {
        self.id = id
        self.projectID = projectID
        self.url = url
        self.secret = secret
        self.types = types
        self.state = state
        self.cursor = cursor
        self.failures = failures
        self.failingSince = failingSince
        self.nextAttemptAt = nextAttemptAt
        self.lastErrors = lastErrors
        self.createdAt = createdAt
    }

    /// How long an event is retried before the webhook is paused: a day.
    public static let retryWindowSeconds: Int64 = 86_400
    /// The longest wait between two attempts: an hour.
    public static let longestBackoffSeconds: Int64 = 3_600
    public static let errorsKept = 5

    /// The webhook once its events through `sequence` were taken: nothing fails any more.
    public func delivered(through sequence: Int64, at now: Timestamp) -> Webhook {
        var next = self
        next.cursor = sequence
        next.failures = 0
        next.failingSince = nil
        next.nextAttemptAt = now
        return next
    }

    /// The webhook once the event after `cursor` failed at `now` with `error`: tried again
    /// after a wait that doubles from a second (up to an hour), and paused once it has
    /// failed for `retryWindowSeconds`.
    public func failed(_ error: String, at now: Timestamp) -> Webhook {
        var next = self
        next.failures += 1
        let since = failingSince ?? now
        next.failingSince = since
        next.lastErrors = Array((lastErrors + [error]).suffix(Self.errorsKept))
        let wait = min(Self.longestBackoffSeconds, Int64(1) << min(next.failures - 1, 20))
        next.nextAttemptAt = now.adding(seconds: wait)
        if now.milliseconds - since.milliseconds >= Self.retryWindowSeconds * 1000 { next.state = .paused }
        return next
    }

    /// The webhook an operator resumed at `now`: tried at once, from where it stopped.
    public func resumed(at now: Timestamp) -> Webhook {
        var next = self
        next.state = .active
        next.failures = 0
        next.failingSince = nil
        next.nextAttemptAt = now
        return next
    }

    /// Whether it wants `event`.
    public func wants(_ event: MessageEvent) -> Bool { types.isEmpty || types.contains(event.type) }
}

extension Webhook {
    /// A new active webhook of `projectID` posting to `url`, with an unguessable id and
    /// secret, that starts after event `cursor` (the newest when it is added).
    public static func make(
        projectID: String, url: String, types: Set<MessageEventType>, cursor: Int64, at now: Timestamp
    ) -> Webhook {
        Webhook(
            id: "wh_" + SecureRandom.hex(bytes: 12), projectID: projectID, url: url,
            secret: "whsec_" + SecureRandom.token(bytes: 32), types: types, cursor: cursor, nextAttemptAt: now,
            createdAt: now)
    }
}
