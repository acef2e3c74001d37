import Foundation
public import HeraldCore
import HeraldHTTP
public import HeraldStorage

/// What `herald project …` does: make projects and their credentials, list, show,
/// delete, rotate and revoke keys. It works on the store directly, so it works while a
/// server runs on the same data directory; the server sees changes within a second.
public struct ProjectAdministration: Sendable {
    /// What a new project or a new key comes with.
    public struct IssuedKey: Sendable {
        /// The project.
        public var project: Project
        /// The new key's record.
        public var key: ServiceAccountKey
        /// Where the key file was written.
        public var keyFilePath: String
    }

    private let store: any CredentialStore
    private let clock: any HeraldClock

    public init(store: any CredentialStore, clock: any HeraldClock = SystemClock()) {
        self.store = store
        self.clock = clock
    }

    /// Creates a project with a new sender id, API key, server key and service-account
    /// key, and writes `<id>-service-account.json` into `directory`.
    public func createProject(id: String, publicURL: String, keyFileDirectory directory: String) async throws
        -> IssuedKey
    {
        guard Project.isValidID(id) else {
            throw AdministrationError(
                "A project id is 4 to 63 lower-case letters, digits and hyphens, starting with a letter: \"\(id)\".")
        }
        if try await store.project(id: id) != nil { throw AdministrationError("Project \(id) exists already.") }
        let now = clock.now()
        let (key, file) = try ServiceAccountKeyFile.issue(projectID: id, publicURL: publicURL, now: now)
        var lastError: (any Error)?
        // A random project number may collide; try a few times.
        for _ in 0..<5 {
            let project = Project.make(id: id, createdAt: now)
            do {
                try await store.createProject(project, firstKey: key)
                let path = try write(file, directory: directory)
                return IssuedKey(project: project, key: key, keyFilePath: path)
            } catch let error as StoreError {
                lastError = error
                if try await store.project(id: id) != nil { throw AdministrationError("Project \(id) exists already.") }
            }
        }
        throw lastError ?? AdministrationError("Could not create project \(id).")
    }

    /// Adds a new key to a project and writes its key file; revokes `revoking` if given.
    public func rotateKey(projectID: String, revoking: String?, publicURL: String, keyFileDirectory directory: String)
        async throws -> IssuedKey
    {
        guard let project = try await store.project(id: projectID) else {
            throw AdministrationError("No project \(projectID).")
        }
        if let revoking {
            guard let old = try await store.serviceAccountKey(id: revoking), old.projectID == projectID else {
                throw AdministrationError("Project \(projectID) has no key \(revoking).")
            }
        }
        let now = clock.now()
        let (key, file) = try ServiceAccountKeyFile.issue(projectID: projectID, publicURL: publicURL, now: now)
        try await store.addServiceAccountKey(key)
        let path = try write(file, directory: directory)
        if let revoking { _ = try await store.revokeServiceAccountKey(id: revoking, at: now) }
        return IssuedKey(project: project, key: key, keyFilePath: path)
    }

    /// Replaces the server-wide secret that access and installation tokens are signed with;
    /// tokens signed with the old one are accepted for at most an hour more, and running
    /// servers pick up the new one within a second.
    public func rotateSigningSecret(now: Timestamp = SystemClock().now()) async throws {
        try await store.rotateSecret(named: HeraldNode.signingSecretName, to: SecureRandom.bytes(32), at: now)
    }

    /// Revokes one key of a project.
    public func revokeKey(projectID: String, keyID: String) async throws {
        guard let key = try await store.serviceAccountKey(id: keyID), key.projectID == projectID else {
            throw AdministrationError("Project \(projectID) has no key \(keyID).")
        }
        guard try await store.revokeServiceAccountKey(id: keyID, at: clock.now()) else {
            throw AdministrationError("Key \(keyID) is revoked already.")
        }
    }

    private func write(_ file: ServiceAccountKeyFile, directory: String) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = (directory as NSString).appendingPathComponent("\(file.projectID)-service-account.json")
        let created = FileManager.default.createFile(
            atPath: path, contents: Data(file.contents.utf8), attributes: [.posixPermissions: 0o600])
        guard created else { throw AdministrationError("Could not write \(path).") }
        return path
    }
}

/// An administration command that cannot be carried out; the text says why.
public struct AdministrationError: Error, CustomStringConvertible, Sendable {
    public var description: String

    public init(_ description: String) {
        self.description = description
    }
}
