public import HeraldCore

/// Projects, their settings, service-account keys and the node secrets, with a revision
/// that moves whenever any of them changes.
///
/// Every method is a transaction of its own; a method that returns has made its change
/// durable.
public protocol CredentialStore: Sendable {
    /// Creates a project together with its first service-account key.
    /// Throws `StoreError.conflict` when the id, number or a key is taken.
    func createProject(_ project: Project, firstKey: ServiceAccountKey) async throws

    /// The project with this id, if any.
    func project(id: String) async throws -> Project?

    /// Every project, ordered by id.
    func projects() async throws -> [Project]

    /// Replaces a project's settings; false when there is no such project.
    func updateSettings(_ settings: ProjectSettings, projectID: String) async throws -> Bool

    /// Deletes a project with its keys and messages; false when there is no such project.
    func deleteProject(id: String) async throws -> Bool

    /// Adds a key to an existing project. Throws `StoreError.notFound` or `.conflict`.
    func addServiceAccountKey(_ key: ServiceAccountKey) async throws

    /// The key with this id, revoked or not.
    func serviceAccountKey(id: String) async throws -> ServiceAccountKey?

    /// The keys of a project, ordered by creation.
    func serviceAccountKeys(projectID: String) async throws -> [ServiceAccountKey]

    /// Every key of every project.
    func allServiceAccountKeys() async throws -> [ServiceAccountKey]

    /// Marks a key revoked; false when there is no such active key.
    func revokeServiceAccountKey(id: String, at time: Timestamp) async throws -> Bool

    /// A number that changes whenever a project, its settings or its keys change, so a
    /// cache can tell cheaply whether to reload.
    func credentialsRevision() async throws -> Int64

    /// The secret with this name, created from `make` the first time it is asked for;
    /// every node sharing the store gets the same value.
    func secret(named name: String, orCreate make: @escaping @Sendable () -> [UInt8]) async throws -> [UInt8]

    /// Replaces the secret `name` with `value`, keeping the value it replaces as
    /// `<name>.previous` and the time as `<name>.rotated-at` (`SecretRotation`), and moves
    /// the credentials revision so that every node reloads.
    func rotateSecret(named name: String, to value: [UInt8], at time: Timestamp) async throws
}
