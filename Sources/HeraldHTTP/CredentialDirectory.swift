public import HeraldCore
public import HeraldStorage
import Synchronization

/// An in-memory copy of every project and service-account key, so that a request is
/// authenticated and authorized without a database read.
///
/// `HeraldServer` reloads it when the store's credentials revision changes (checked
/// every second), so a key revoked or a setting changed by `herald project` from another
/// process takes effect within a second.
public final class CredentialDirectory: Sendable {
    struct Snapshot {
        var revision: Int64 = -1
        var projectsByID: [String: Project] = [:]
        var projectsByNumber: [Int64: Project] = [:]
        var projectsByServerKey: [String: Project] = [:]
        var keysByID: [String: ServiceAccountKey] = [:]
    }

    private let snapshot: Mutex<Snapshot> = Mutex(Snapshot())

    public init() {}

    /// Reloads from the store when its credentials revision changed; answers whether it did.
    @discardableResult
    public func reload(from store: any HeraldStore, force: Bool = false) async throws -> Bool {
        let revision = try await store.credentialsRevision()
        if !force, snapshot.withLock({ $0.revision == revision }) { return false }
        let projects = try await store.projects()
        let keys = try await store.allServiceAccountKeys()
        var next = Snapshot()
        next.revision = revision
        for project in projects {
            next.projectsByID[project.id] = project
            next.projectsByNumber[project.number] = project
            next.projectsByServerKey[project.serverKey] = project
        }
        for key in keys {
            next.keysByID[key.id] = key
        }
        snapshot.withLock { $0 = next }
        return true
    }

    /// The project named by a v1 URL: its id, or its number.
    public func project(named name: some StringProtocol) -> Project? {
        snapshot.withLock { snapshot in
            if let project = snapshot.projectsByID[String(name)] { return project }
            if let number = Int64(name) { return snapshot.projectsByNumber[number] }
            return nil
        }
    }

    /// The project whose legacy server key this is (SEMANTICS C5).
    public func project(serverKey: String) -> Project? {
        snapshot.withLock { $0.projectsByServerKey[serverKey] }
    }

    /// The project with this sender id.
    public func project(number: Int64) -> Project? {
        snapshot.withLock { $0.projectsByNumber[number] }
    }

    /// The key with this id, when it is active and its project exists.
    public func activeKey(id: String) -> ServiceAccountKey? {
        snapshot.withLock { snapshot in
            guard let key = snapshot.keysByID[id], key.isActive, snapshot.projectsByID[key.projectID] != nil
            else { return nil }
            return key
        }
    }
}
