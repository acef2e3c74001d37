public import HeraldCore
public import HeraldStorage
import Synchronization

/// An in-memory copy of every project and service-account key, so that a request is
/// authenticated and authorized without a database read.
///
/// `HeraldServer` reloads it when the store's credentials revision changes (checked
/// every second), so a key revoked or a setting changed by `herald project` from another
/// process takes effect within a second. A project or key it does not know is looked for
/// in the store at once (`find`), so one created a moment ago works on its first request;
/// those looks are bounded per second, so a flood of unknown keys costs the store little.
public final class CredentialDirectory: Sendable {
    struct Snapshot {
        var revision: Int64 = -1
        var projectsByID: [String: Project] = [:]
        var projectsByNumber: [Int64: Project] = [:]
        var projectsByServerKey: [String: Project] = [:]
        var keysByID: [String: ServiceAccountKey] = [:]
    }

    private let snapshot: Mutex<Snapshot> = Mutex(Snapshot())
    private let store: (any CredentialStore)?
    private let clock: any HeraldClock
    private let looksAfterMiss: Mutex<(second: Int64, count: Int)> = Mutex((0, 0))
    /// How many times a second a miss may make the directory look in the store.
    public let looksAfterMissPerSecond: Int

    /// A directory over `store`, which `find` looks in after a miss (none: it never does).
    public init(
        store: (any CredentialStore)? = nil, clock: any HeraldClock = SystemClock(), looksAfterMissPerSecond: Int = 4
    ) {
        self.store = store
        self.clock = clock
        self.looksAfterMissPerSecond = looksAfterMissPerSecond
    }

    /// What `lookUp` finds in the directory; when it finds nothing, the same after the
    /// directory looked in the store for changed credentials, if a look is allowed this second.
    public func find<Found>(_ lookUp: (CredentialDirectory) -> Found?) async -> Found? {
        if let found = lookUp(self) { return found }
        guard let store, mayLookAfterMiss() else { return nil }
        _ = try? await reload(from: store)
        return lookUp(self)
    }

    private func mayLookAfterMiss() -> Bool {
        let second = clock.now().seconds
        return looksAfterMiss.withLock { looks in
            if looks.second != second { looks = (second, 0) }
            guard looks.count < looksAfterMissPerSecond else { return false }
            looks.count += 1
            return true
        }
    }

    /// Reloads from the store when its credentials revision changed; answers whether it did.
    @discardableResult
    public func reload(from store: any CredentialStore, force: Bool = false) async throws -> Bool {
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

    /// Whether a caller's key is active and belongs to the caller's project.
    public func isActive(_ caller: Caller) -> Bool {
        activeKey(id: caller.keyID)?.projectID == caller.projectID
    }

    /// The project a URL names, when it is the caller's.
    public func project(named name: some StringProtocol, for caller: Caller) -> Project? {
        guard let project = project(named: name), project.id == caller.projectID else { return nil }
        return project
    }
}
