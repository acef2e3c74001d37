public import HeraldCore

/// A store that keeps everything in memory: for unit tests, and as the reference the
/// other backends are checked against.
public actor InMemoryStore: HeraldStore {
    /// Never counted: it has no database to go to.
    public nonisolated let calls = StoreCalls()
    var projectsByID: [String: Project] = [:]
    private var keysByID: [String: ServiceAccountKey] = [:]
    private var secrets: [String: [UInt8]] = [:]
    private var receipts: Set<String> = []
    private var messages: [String: StoredMessage] = [:]
    var revision: Int64 = 0
    private var devices: [UInt64: Device] = [:]
    var registrationsByToken: [String: Registration] = [:]
    private var installations: [String: Installation] = [:]
    var apnsCredentialsByProject: [String: [APNsCredential.Kind: APNsCredential]] = [:]
    var fcmRelayCredentialsByProject: [String: FCMRelayCredential] = [:]
    var webPushKeysByProject: [String: WebPushKey] = [:]
    private var queue: [QueuedMessage] = []
    /// When each hand-off entry (by sequence) is next due; absent is due at once.
    var handOffAt: [Int64: Int64] = [:]
    /// The queue as the extensions read it.
    var queuedEntries: [QueuedMessage] { queue }
    private var lastSequence: Int64 = 0
    private var stats: [DeliveryStatKey: [DeliveryCounter: Int]] = [:]
    var topicSubscriptions: [String: [String: TopicSubscription]] = [:]
    private var fanouts: [String: FanoutJob] = [:]
    var deviceGroups: [String: DeviceGroup] = [:]
    /// Messages for app servers, with their lease holder and end.
    private var upstream: [(message: UpstreamMessage, holder: String, leasedUntil: Timestamp)] = []
    private var lastUpstreamSequence: Int64 = 0
    private var pushReceiptsKept: [PushReceipt] = []
    var consoleUsersByName: [String: ConsoleUser] = [:]
    var consoleValues: [String: (value: [UInt8], expiresAt: Timestamp?)] = [:]
    var scheduled: [String: ScheduledSend] = [:]
    var errorCountsByKey: [ErrorCountKey: Int] = [:]

    /// The node the events it writes name.
    let nodeID: String
    /// Events by sequence, and the counts of facts kept only as counts (`EventStore`).
    var eventLog: [MessageEvent] = []
    var messageCounts: [EventRows.Count: (value: Int, at: Timestamp)] = [:]
    var lastEventSequence: Int64 = 0
    /// Webhooks by id, with their holder and when they are next due (nil while paused).
    var webhookRows: [String: (webhook: Webhook, holder: String, readyAt: Int64?)] = [:]

    public init(nodeID: String = "node-1") {
        self.nodeID = nodeID
    }

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
        registrationsByToken = registrationsByToken.filter { $0.value.projectID != id }
        topicSubscriptions = topicSubscriptions.compactMapValues { subscriptions in
            let kept = subscriptions.filter { $0.value.projectID != id }
            return kept.isEmpty ? nil : kept
        }
        fanouts = fanouts.filter { $0.value.projectID != id }
        eventLog.removeAll { $0.projectID == id }
        webhookRows = webhookRows.filter { $0.value.webhook.projectID != id }
        messageCounts = messageCounts.filter { $0.key.projectID != id }
        deviceGroups = deviceGroups.filter { $0.value.projectID != id }
        installations = installations.filter { $0.value.projectID != id }
        apnsCredentialsByProject[id] = nil
        fcmRelayCredentialsByProject[id] = nil
        webPushKeysByProject[id] = nil
        queue.removeAll { $0.projectID == id }
        upstream.removeAll { $0.message.projectID == id }
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

    public func rotateSecret(named name: String, to value: [UInt8], at time: Timestamp) {
        secrets[name + SecretRotation.previousSuffix] = secrets[name] ?? []
        secrets[name + SecretRotation.rotatedAtSuffix] = SecretRotation.encode(time)
        secrets[name] = value
        revision += 1
    }

    public func appendMessages(
        _ batch: [StoredMessage], queue entries: [QueuedMessage], limits: QueueLimits, stats additions: [DeliveryStat]
    ) throws -> [Enqueued] {
        for message in batch where messages[message.id] != nil {
            throw StoreError.conflict("message id \(message.id)")
        }
        // A push channel's entries belong to no project (empty id).
        for projectID in batch.map(\.projectID) + entries.map(\.projectID)
        where !projectID.isEmpty && projectsByID[projectID] == nil {
            throw StoreError.notFound("project \(projectID)")
        }
        let devices = Set(entries.map(\.androidID))
        let current = queue.filter { devices.contains($0.androidID) }
        let plan = try QueueBatchPlan(
            storing: entries, current: current,
            taken: Set(current.map { .init(androidID: $0.androidID, persistentID: $0.persistentID) }),
            limits: limits, stats: additions)
        for message in batch {
            messages[message.id] = message
            if let event = EventRows.accepted(message, node: nodeID) { keep([event]) }
        }
        let deleted = Set(plan.deletes)
        queue.removeAll { deleted.contains($0.sequence) }
        record(plan.stats)
        return plan.enqueued(sequences: plan.inserts.map { append($0).sequence })
    }

    private func append(_ entry: QueuedMessage) -> QueuedMessage {
        var entry = entry
        lastSequence += 1
        entry.sequence = lastSequence
        queue.append(entry)
        return entry
    }

    public func message(id: String) -> StoredMessage? { messages[id] }

    public func messageCount(projectID: String) -> Int {
        messages.values.count { $0.projectID == projectID }
    }

    public func createDevice(_ device: Device) throws {
        guard devices[device.androidID] == nil else { throw StoreError.conflict("android id") }
        devices[device.androidID] = device
    }

    public func device(androidID: UInt64) -> Device? { devices[androidID] }

    public func createRegistration(_ registration: Registration) throws {
        guard registrationsByToken[registration.token] == nil else { throw StoreError.conflict("token") }
        if let projectID = registration.projectID, projectsByID[projectID] == nil {
            throw StoreError.notFound("project \(projectID)")
        }
        guard devices[registration.androidID] != nil else { throw StoreError.notFound("device") }
        registrationsByToken[registration.token] = registration
    }

    public func registration(token: String) -> Registration? { registrationsByToken[token] }

    public func registration(installationID: String, projectID: String) -> Registration? {
        registrationsByToken.values.filter { $0.installationID == installationID && $0.projectID == projectID }
            .max { ($0.createdAt, $0.token) < ($1.createdAt, $1.token) }
    }

    public func webRegistrations(projectID: String, limit: Int) -> [Registration] {
        Array(
            registrationsByToken.values.filter {
                $0.projectID == projectID && $0.platform == .web && $0.deletedAt == nil
            }.sorted { $0.token < $1.token }.prefix(limit))
    }

    public func registrations(androidID: UInt64) -> [Registration] {
        registrationsByToken.values.filter { $0.androidID == androidID && $0.deletedAt == nil }.sorted {
            $0.token < $1.token
        }
    }

    public func deleteRegistration(token: String, at time: Timestamp) -> Registration? {
        guard var registration = registrationsByToken[token], registration.deletedAt == nil else { return nil }
        registration.deletedAt = time
        registrationsByToken[token] = registration
        let discarded = queue.filter { $0.token == token && $0.deletedCount == 0 }
        queue.removeAll { $0.token == token }
        record(discarded.map { $0.stat(.unregistered) })
        return registration
    }

    public func lastConnections(androidIDs: [UInt64]) -> [UInt64: Timestamp?] {
        var result: [UInt64: Timestamp?] = [:]
        for id in androidIDs { if let device = devices[id] { result[id] = device.lastConnectedAt } }
        return result
    }

    public func recordConnection(androidID: UInt64, at time: Timestamp) {
        devices[androidID]?.lastConnectedAt = time
    }

    public func createInstallation(_ installation: Installation) throws -> Bool {
        guard projectsByID[installation.projectID] != nil else { throw StoreError.notFound("project") }
        let key = installation.projectID + "/" + installation.fid
        guard installations[key] == nil else { return false }
        installations[key] = installation
        return true
    }

    public func installation(fid: String, projectID: String) -> Installation? {
        installations[projectID + "/" + fid]
    }

    public func pendingMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        -> [QueuedMessage]
    {
        Array(
            queue.lazy.filter { $0.androidID == androidID && $0.sequence > sequence && $0.expiresAt > now }.prefix(
                limit))
    }

    public func pendingHighPriorityMessages(androidID: UInt64, after sequence: Int64, limit: Int, now: Timestamp)
        -> [QueuedMessage]
    {
        Array(
            queue.lazy.filter {
                $0.androidID == androidID && $0.sequence > sequence && $0.expiresAt > now && $0.isHighPriority
            }.prefix(limit))
    }

    public func acknowledge(androidID: UInt64, persistentIDs: [String]) -> Int {
        let ids = Set(persistentIDs)
        let removed = queue.filter { $0.androidID == androidID && ids.contains($0.persistentID) }
        queue.removeAll { $0.androidID == androidID && ids.contains($0.persistentID) }
        record(removed.filter { $0.deletedCount == 0 }.map { $0.stat(.delivered) })
        let now = SystemClock().now()
        appendPushReceipts(
            removed.filter { !$0.receiptID.isEmpty && $0.projectID.isEmpty }.map {
                PushReceipt(
                    subscription: $0.receiptID, token: $0.token, messageID: $0.persistentID, acknowledgedAt: now)
            })
        appendUpstream(
            removed.filter { !$0.receiptID.isEmpty && !$0.projectID.isEmpty }.map {
                UpstreamMessage.receipt(
                    projectID: $0.projectID, originalMessageID: $0.receiptID, token: $0.token, category: $0.appID,
                    androidID: $0.androidID, at: now)
            })
        return removed.count
    }

    public func withdraw(androidID: UInt64, persistentID: String) -> Bool {
        let before = queue.count
        queue.removeAll { $0.androidID == androidID && $0.persistentID == persistentID }
        return queue.count < before
    }

    public func acknowledge(batch: [UInt64: [String]]) -> Int {
        batch.reduce(0) { $0 + acknowledge(androidID: $1.key, persistentIDs: $1.value) }
    }

    public func deleteAbandonedDevices(checkedInBefore: Timestamp, limit: Int) -> Int {
        let registered = Set(registrationsByToken.values.map(\.androidID))
        let abandoned = devices.values.filter {
            $0.createdAt < checkedInBefore && $0.lastConnectedAt == nil && !registered.contains($0.androidID)
        }.prefix(limit)
        for device in abandoned { devices[device.androidID] = nil }
        return abandoned.count
    }

    public func deleteAbandonedInstallations(createdBefore: Timestamp, limit: Int) -> Int {
        let named = Set(
            registrationsByToken.values.compactMap { registration in
                registration.installationID.map { "\(registration.projectID ?? "")/\($0)" }
            })
        let abandoned = installations.filter { $0.value.createdAt < createdBefore && !named.contains($0.key) }
            .prefix(limit)
        for (key, _) in abandoned { installations[key] = nil }
        return abandoned.count
    }

    public func deleteExpired(now: Timestamp, limit: Int) -> Int {
        for id in messages.values.filter({ $0.expiresAt <= now }).prefix(limit).map(\.id) { messages[id] = nil }
        let expired = Array(queue.filter { $0.expiresAt <= now }.prefix(limit))
        let sequences = Set(expired.map(\.sequence))
        queue.removeAll { sequences.contains($0.sequence) }
        record(expired.filter { $0.deletedCount == 0 }.map { $0.stat(.expired) })
        return expired.count
    }

    public func subscribe(_ subscription: TopicSubscription, limit: Int) throws -> Bool {
        guard registrationsByToken[subscription.token] != nil else { throw StoreError.notFound("token") }
        var current = topicSubscriptions[subscription.token] ?? [:]
        guard current[subscription.topic] == nil else { return false }
        guard current.count < limit else { throw StoreError.limit("topics per token") }
        current[subscription.topic] = subscription
        topicSubscriptions[subscription.token] = current
        return true
    }

    public func unsubscribe(token: String, topic: String) -> Bool {
        topicSubscriptions[token]?.removeValue(forKey: topic) != nil
    }

    public func subscriptions(token: String) -> [TopicSubscription] {
        (topicSubscriptions[token] ?? [:]).values.sorted { $0.topic < $1.topic }
    }

    public func topics(ofTokens tokens: [String]) -> [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        for token in tokens {
            if let topics = topicSubscriptions[token], !topics.isEmpty { result[token] = Set(topics.keys) }
        }
        return result
    }

    public func audience(projectID: String, topics: [String]?, after cursor: String, limit: Int) -> [Registration] {
        let wanted = topics.map(Set.init)
        let candidates = registrationsByToken.values.filter { registration in
            guard registration.projectID == projectID, registration.kind == .app, registration.deletedAt == nil
            else { return false }
            guard let wanted else { return true }
            return !Set((topicSubscriptions[registration.token] ?? [:]).keys).isDisjoint(with: wanted)
        }
        return FanoutPosition(cursor: cursor).page(of: candidates, limit: limit)
    }

    public func audience(projectID: String, topics: [String]?, androidIDs: [UInt64]) -> [Registration] {
        let devices = Set(androidIDs)
        return audience(projectID: projectID, topics: topics, after: "", limit: .max).filter {
            devices.contains($0.androidID)
        }
        .sorted { $0.token < $1.token }
    }

    public func createFanout(_ message: StoredMessage, job: FanoutJob, stats additions: [DeliveryStat]) throws {
        _ = try appendMessages([message], queue: [], limits: .unlimited, stats: additions)
        fanouts[job.messageID] = job
    }

    public func fanoutProgress(messageID: String) -> (state: FanoutJob.State, reached: Int)? {
        fanouts[messageID].map { ($0.state, $0.delivered) }
    }

    public func receiptCounts(messageID: String) -> [DeliveryCounter: Int] {
        var counts: [DeliveryCounter: Int] = [:]
        for receipt in receipts where receipt.hasPrefix(messageID + " ") {
            if let counter = receipt.split(separator: " ").last.flatMap({ DeliveryCounter(rawValue: String($0)) }) {
                counts[counter, default: 0] += 1
            }
        }
        return counts
    }

    public func unfinishedFanouts() -> [FanoutJob] {
        fanouts.values.filter { $0.state != .done }.sorted {
            ($0.createdAt, $0.messageID) < ($1.createdAt, $1.messageID)
        }
    }

    public func storeFanoutPage(
        messageID: String, queue entries: [QueuedMessage], firstDone: Int, cursor: String, reached: Int, done: Bool,
        limits: QueueLimits, stats additions: [DeliveryStat]
    ) throws -> [Enqueued] {
        guard fanouts[messageID] != nil else { throw StoreError.notFound("fanout \(messageID)") }
        let decisions = try appendMessages([], queue: entries, limits: limits, stats: additions)
        fanouts[messageID]?.firstDone = firstDone
        fanouts[messageID]?.cursor = cursor
        fanouts[messageID]?.delivered += reached
        if done { fanouts[messageID]?.state = .done }
        return decisions
    }

    public func startFanout(messageID: String, firstDevices: [UInt64]) -> [UInt64] {
        if fanouts[messageID]?.state == .queued {
            fanouts[messageID]?.state = .running
            fanouts[messageID]?.firstDevices = firstDevices
        }
        return fanouts[messageID]?.firstDevices ?? []
    }

    public func createDeviceGroup(_ group: DeviceGroup) throws {
        guard !deviceGroups.values.contains(where: { $0.projectID == group.projectID && $0.name == group.name }) else {
            throw StoreError.conflict("device group \(group.name)")
        }
        deviceGroups[group.notificationKey] = group
    }

    public func deviceGroup(projectID: String, name: String?, notificationKey: String?) -> DeviceGroup? {
        deviceGroups.values.first { group in
            group.projectID == projectID && (name == nil || group.name == name)
                && (notificationKey == nil || group.notificationKey == notificationKey)
        }
    }

    public func updateDeviceGroup(projectID: String, notificationKey: String, members: [String]) throws {
        guard deviceGroups[notificationKey]?.projectID == projectID else { throw StoreError.notFound("device group") }
        if members.isEmpty {
            deviceGroups[notificationKey] = nil
        } else {
            deviceGroups[notificationKey]?.members = members
        }
    }

    public func record(_ additions: [DeliveryStat]) {
        for stat in additions where !stat.key.projectID.isEmpty {
            stats[stat.key, default: [:]][stat.counter, default: 0] += stat.amount
        }
        recordEvents(additions)
    }

    public func recordReceipt(_ stat: DeliveryStat, messageID: String, androidID: UInt64) -> Bool {
        guard messages[messageID] != nil, receipts.insert("\(messageID) \(androidID) \(stat.counter)").inserted
        else { return false }
        record([stat])
        return true
    }

    public func deliveryReport(projectID: String, appID: String?, from: CalendarDay, through: CalendarDay)
        -> [DeliveryReportRow]
    {
        var keys = Set(stats.keys)
        for entry in queue where entry.deletedCount == 0 { keys.insert(entry.statKey) }
        return keys.filter { key in
            guard key.projectID == projectID, appID == nil || key.appID == appID, let day = CalendarDay(key.day) else {
                return false
            }
            return from <= day && day <= through
        }
        .sorted { ($0.day, $0.appID, $0.label) < ($1.day, $1.appID, $1.label) }
        .map { key in
            DeliveryReportRow(
                key: key, counts: stats[key] ?? [:],
                pending: queue.count { $0.deletedCount == 0 && $0.statKey == key })
        }
    }

    public func queuedCount(androidID: UInt64) -> Int {
        queue.count { $0.androidID == androidID }
    }

    private static func creationOrder(_ a: ServiceAccountKey, _ b: ServiceAccountKey) -> Bool {
        (a.createdAt, a.id) < (b.createdAt, b.id)
    }

    // MARK: Upstream

    @discardableResult
    public func appendUpstream(_ messages: [UpstreamMessage]) -> Int {
        var added = 0
        for var message in messages {
            guard
                !upstream.contains(where: {
                    $0.message.projectID == message.projectID && $0.message.kind == message.kind
                        && $0.message.token == message.token && $0.message.messageID == message.messageID
                })
            else { continue }
            lastUpstreamSequence += 1
            message.sequence = lastUpstreamSequence
            upstream.append((message, "", Timestamp(milliseconds: 0)))
            added += 1
        }
        return added
    }

    public func leaseUpstream(projectID: String, holder: String, now: Timestamp, until: Timestamp, limit: Int)
        -> [UpstreamMessage]
    {
        var leased: [UpstreamMessage] = []
        for index in upstream.indices where leased.count < limit {
            let entry = upstream[index]
            guard entry.message.projectID == projectID, entry.leasedUntil <= now, entry.message.expiresAt > now
            else { continue }
            upstream[index].holder = holder
            upstream[index].leasedUntil = until
            leased.append(entry.message)
        }
        return leased
    }

    public func releaseUpstream(holderPrefix: String) {
        for index in upstream.indices where upstream[index].holder.hasPrefix(holderPrefix) {
            upstream[index].holder = ""
            upstream[index].leasedUntil = Timestamp(milliseconds: 0)
        }
    }

    @discardableResult
    public func acknowledgeUpstream(projectID: String, messageID: String, token: String?) -> Bool {
        let before = upstream.count
        upstream.removeAll {
            $0.message.projectID == projectID && $0.message.messageID == messageID
                && (token == nil || $0.message.kind == .receipt || $0.message.token == token)
        }
        return upstream.count < before
    }

    public func deleteExpiredUpstream(now: Timestamp, limit: Int) -> [UpstreamMessage] {
        let expired = upstream.filter { $0.message.expiresAt <= now }.prefix(limit).map(\.message)
        let sequences = Set(expired.map(\.sequence))
        upstream.removeAll { sequences.contains($0.message.sequence) }
        return expired
    }

    public func upstreamCount(projectID: String) -> Int {
        upstream.count { $0.message.projectID == projectID }
    }

    public func upstreamWaiting(projectID: String, androidID: UInt64) -> (project: Int, device: Int) {
        (
            upstreamCount(projectID: projectID),
            upstream.count { $0.message.androidID == androidID && $0.message.kind == .message }
        )
    }

    public func appendPushReceipts(_ receipts: [PushReceipt]) {
        for var receipt in receipts
        where !pushReceiptsKept.contains(where: {
            $0.subscription == receipt.subscription && $0.token == receipt.token && $0.messageID == receipt.messageID
        }) {
            lastUpstreamSequence += 1
            receipt.sequence = lastUpstreamSequence
            pushReceiptsKept.append(receipt)
        }
    }

    public func pushReceipts(subscription: String, acknowledgedThrough: Int64, limit: Int) -> [PushReceipt] {
        pushReceiptsKept.removeAll { $0.subscription == subscription && $0.sequence <= acknowledgedThrough }
        return Array(pushReceiptsKept.lazy.filter { $0.subscription == subscription }.prefix(limit))
    }

    public func deleteExpiredPushReceipts(now: Timestamp, limit: Int) -> Int {
        let expired = Set(pushReceiptsKept.filter { $0.expiresAt <= now }.prefix(limit).map(\.sequence))
        pushReceiptsKept.removeAll { expired.contains($0.sequence) }
        return expired.count
    }
}
