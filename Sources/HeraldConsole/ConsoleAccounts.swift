public import HeraldCore
public import HeraldStorage
import HummingbirdBcrypt

/// Making console users: a name, a password kept only as its bcrypt hash (cost 12, its
/// own salt), the projects they are given or admin.
public enum ConsoleAccounts {
    /// The shortest password accepted.
    public static let minimumPasswordLength = 10

    /// Why a user could not be saved.
    public struct Refusal: Error, CustomStringConvertible {
        public var description: String
    }

    /// Creates the user, or replaces the one of that name (a new password, new projects).
    @discardableResult
    public static func save(
        name: String, password: String, projectIDs: [String], isAdmin: Bool, store: any ConsoleStore & CredentialStore,
        now: Timestamp
    ) async throws -> ConsoleUser {
        guard !name.isEmpty, name.count <= 64, name.allSatisfy({ $0.isLetter || $0.isNumber || "._@-".contains($0) })
        else {
            throw Refusal(description: "a user name is 1 to 64 letters, digits and . _ @ -")
        }
        guard password.count >= minimumPasswordLength else {
            throw Refusal(description: "a password has at least \(minimumPasswordLength) characters")
        }
        for projectID in projectIDs where try await store.project(id: projectID) == nil {
            throw Refusal(description: "no project \(projectID)")
        }
        let user = ConsoleUser(
            name: name, passwordHash: Bcrypt.hash(password, cost: 12), isAdmin: isAdmin, projectIDs: projectIDs,
            createdAt: now)
        try await store.saveConsoleUser(user)
        return user
    }
}
