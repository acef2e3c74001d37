public import HeraldCore

/// A send the console holds until its time: the v1 request it will make, and where it is
/// between being scheduled and going out.
public struct ScheduledSend: Sendable, Hashable {
    /// Where a scheduled send is.
    public enum State: String, Sendable, CaseIterable {
        /// Not yet due, and may still be cancelled.
        case waiting
        /// Claimed by a node until `leasedUntil`; claimed again by any node after that.
        case sending
        /// Accepted as the message `messageID`.
        case sent
        /// Cancelled before its time.
        case cancelled
        /// Refused when it was due; `outcome` says why.
        case failed
    }

    /// Its id in its project, unguessable.
    public var id: String
    /// The project that sends it.
    public var projectID: String
    /// The id its message is accepted under, chosen when it is scheduled so that a second
    /// attempt can tell whether the first one was accepted.
    public var messageID: String
    /// The v1 send request, as JSON.
    public var body: String
    /// What the list of scheduled sends shows of it: its target and title.
    public var summary: String
    /// When it goes out.
    public var dueAt: Timestamp
    /// The console user who scheduled it.
    public var createdBy: String
    public var createdAt: Timestamp
    public var state: State
    /// How many times a node has claimed it.
    public var attempts: Int
    /// Until when the node that claimed it holds it.
    public var leasedUntil: Timestamp
    /// The message's name once sent, or why it was refused.
    public var outcome: String

    public init(
        id: String, projectID: String, messageID: String, body: String, summary: String, dueAt: Timestamp,
        createdBy: String, createdAt: Timestamp, state: State = .waiting, attempts: Int = 0,
        leasedUntil: Timestamp = Timestamp(milliseconds: 0), outcome: String = ""
    ) {
        self.id = id
        self.projectID = projectID
        self.messageID = messageID
        self.body = body
        self.summary = summary
        self.dueAt = dueAt
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.state = state
        self.attempts = attempts
        self.leasedUntil = leasedUntil
        self.outcome = outcome
    }
}
