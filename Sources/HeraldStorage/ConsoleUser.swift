public import HeraldCore

/// A person who signs in to the console: a name, a bcrypt hash of their password, and the
/// projects they are given (an admin is given every project, and may edit limits).
public struct ConsoleUser: Sendable, Equatable {
    public var name: String
    /// The bcrypt hash (`$2b$…`), which carries its own salt and cost.
    public var passwordHash: String
    public var isAdmin: Bool
    /// The projects this user may open, sorted; ignored for an admin.
    public var projectIDs: [String]
    public var createdAt: Timestamp

    public init(name: String, passwordHash: String, isAdmin: Bool, projectIDs: [String], createdAt: Timestamp) {
        self.name = name
        self.passwordHash = passwordHash
        self.isAdmin = isAdmin
        self.projectIDs = Set(projectIDs).sorted()
        self.createdAt = createdAt
    }

    /// Whether this user may see and act on the project.
    public func mayOpen(projectID: String) -> Bool { isAdmin || projectIDs.contains(projectID) }
}
