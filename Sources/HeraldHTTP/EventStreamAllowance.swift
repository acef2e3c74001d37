/// Who holds the event streams open on a node (SEMANTICS E4): a value that admits or
/// refuses a stream by the node's, the project's and the credential's counts, so that one
/// tenant cannot take the streams every project shares.
struct EventStreamAllowance: Sendable {
    /// How many streams may be open at once; defaults in the comments.
    struct Limits: Sendable {
        /// On the node, every listener and project together. Default 256.
        var node = 256
        /// For one project. Default 32.
        var project = 32
        /// For one service-account key. Default 8.
        var credential = 8
    }

    /// Why a stream was refused.
    enum Refusal: Error, Sendable, Equatable {
        case node, project, credential
    }

    /// One open stream's holders, which `leave` is given back.
    struct Holder: Sendable, Hashable {
        var projectID: String
        var keyID: String
    }

    let limits: Limits
    private(set) var open = 0
    private var byProject: [String: Int] = [:]
    private var byCredential: [Holder: Int] = [:]

    init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Counts a stream for `holder`, or answers why it may not open.
    mutating func enter(_ holder: Holder) -> Refusal? {
        if byCredential[holder, default: 0] >= limits.credential { return .credential }
        if byProject[holder.projectID, default: 0] >= limits.project { return .project }
        if open >= limits.node { return .node }
        open += 1
        byProject[holder.projectID, default: 0] += 1
        byCredential[holder, default: 0] += 1
        return nil
    }

    /// A stream of `holder` closed.
    mutating func leave(_ holder: Holder) {
        open -= 1
        byProject[holder.projectID] = byProject[holder.projectID].flatMap { $0 > 1 ? $0 - 1 : nil }
        byCredential[holder] = byCredential[holder].flatMap { $0 > 1 ? $0 - 1 : nil }
    }
}
