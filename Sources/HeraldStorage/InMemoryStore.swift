public import HeraldCore

/// A store that keeps everything in memory: for unit tests, and as the reference the
/// other backends are checked against.
public actor InMemoryStore: HeraldStore {
    private var projectsByID: [String: Project] = [:]
    private var keysByID: [String: ServiceAccountKey] = [:]
    private var secrets: [String: [UInt8]] = [:]
    private var messages: [String: StoredMessage] = [:]
    private var revision: Int64 = 0

    public init() {}

    public func createProject(_ project: Project, firstKey: ServiceAccountKey) throws {
        guard projectsByID[project.id] == nil else { throw StoreError.conflict("project id \(project.id)") }
        guard !projectsByID.values.contains(where: { $0.number == project.number }) else {
            throw StoreError.conflict("project number \(project.number)")
        }
        guard keysByID[firstKey.id] == nil else { throw StoreError.conflict("key id \(firstKey.id)") }
        projectsByID[project.id] = project
        keysByID[firstKey.id] = firstKey
        revision += 1
    }

    public func project(id: String) -> Project? { projectsByID[id] }

    public func projects() -> [Project] { projectsByID.values.sorted { $0.id < $1.id } }

    public func updateSettings(_ settings: ProjectSettings, projectID: String) -> Bool {
        guard projectsByID[projectID] != nil else { return false }
        projectsByID[projectID]?.settings = settings
        revision += 1
        return true
    }

    public func deleteProject(id: String) -> Bool {
        guard projectsByID.removeValue(forKey: id) != nil else { return false }
        keysByID = keysByID.filter { $0.value.projectID != id }
        messages = messages.filter { $0.value.projectID != id }
        revision += 1
        return true
    }

    public func addServiceAccountKey(_ key: ServiceAccountKey) throws {
        guard projectsByID[key.projectID] != nil else { throw StoreError.notFound("project \(key.projectID)") }
        guard keysByID[key.id] == nil else { throw StoreError.conflict("key id \(key.id)") }
        keysByID[key.id] = key
        revision += 1
    }

    public func serviceAccountKey(id: String) -> ServiceAccountKey? { keysByID[id] }

    public func serviceAccountKeys(projectID: String) -> [ServiceAccountKey] {
        keysByID.values.filter { $0.projectID == projectID }.sorted(by: Self.creationOrder)
    }

    public func allServiceAccountKeys() -> [ServiceAccountKey] {
        keysByID.values.sorted(by: Self.creationOrder)
    }

    public func revokeServiceAccountKey(id: String, at time: Timestamp) -> Bool {
        guard let key = keysByID[id], key.isActive else { return false }
        keysByID[id]?.revokedAt = time
        revision += 1
        return true
    }

    public func credentialsRevision() -> Int64 { revision }

    public func secret(named name: String, orCreate make: @escaping @Sendable () -> [UInt8]) -> [UInt8] {
        if let existing = secrets[name] { return existing }
        let value = make()
        secrets[name] = value
        return value
    }

    public func appendMessages(_ batch: [StoredMessage]) throws {
        for message in batch where messages[message.id] != nil {
            throw StoreError.conflict("message id \(message.id)")
        }
        for message in batch {
            guard projectsByID[message.projectID] != nil else {
                throw StoreError.notFound("project \(message.projectID)")
            }
        }
        for message in batch { messages[message.id] = message }
    }

    public func message(id: String) -> StoredMessage? { messages[id] }

    public func messageCount(projectID: String) -> Int {
        messages.values.count { $0.projectID == projectID }
    }

    private static func creationOrder(_ a: ServiceAccountKey, _ b: ServiceAccountKey) -> Bool {
        (a.createdAt, a.id) < (b.createdAt, b.id)
    }
}
