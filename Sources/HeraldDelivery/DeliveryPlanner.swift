public import HeraldCore
import HeraldProtocol
public import HeraldStorage
import SwiftProtobuf

/// Decides what one accepted message means for one registration (SEMANTICS D3–D6, L5):
/// a queue entry to store, a message to hand over at once, or a discard, with the
/// counters to add. The dispatcher uses it for single sends, the fanout engine per page.
public struct DeliveryPlanner: Sendable {
    /// What to do for one registration.
    public struct Plan: Sendable {
        /// The entry to store in the device's queue, if any.
        public var entry: QueuedMessage?
        /// A message to deliver now without storing it (TTL 0), if any.
        public var immediate: QueuedMessage?
        /// Counters to add (accepted included).
        public var stats: [DeliveryStat]
    }

    /// Tailored stanzas by what they depend on, so that a fanout page tailors once for
    /// all the registrations of one app on one platform (web ones are each encrypted).
    public struct StanzaCache: Sendable {
        /// What a tailored stanza depends on besides the message.
        struct Key: Hashable {
            var platform: Platform
            var appID: String
            var sender: String
            var subtype: String?
            var isRelayedToFCM: Bool
        }
        var entries: [Key: (options: DeliveryOptions, stanza: [UInt8], signal: [UInt8])] = [:]

        public init() {}
    }

    let store: any RegistrationStore
    let path: DeliveryPath

    /// The nodes sharing the store, asked who holds a device that is not connected here.
    let cluster: any Cluster

    public init(store: any RegistrationStore, path: DeliveryPath, cluster: any Cluster = SingleNodeCluster()) {
        self.store = store
        self.path = path
        self.cluster = cluster
    }

    /// The plan for `message` (id `id`) to `registration` of `project`, accepted at `now`.
    /// Throws when the registration's keys cannot encrypt for it.
    /// `lastConnected` may carry the device's last connection when the caller read it
    /// already (the fanout engine reads a page's devices at once); otherwise it is read here.
    /// `keepsEvents` says whether what becomes of the entry is kept as events of its own or
    /// only counted for the message (SEMANTICS E2).
    public func plan(
        _ message: HeraldCore.Message, id: String, registration: Registration, project: Project, now: Timestamp,
        persistentID: String? = nil, lastConnected: Timestamp?? = nil, keepsEvents: Bool = true,
        cache: inout StanzaCache
    ) async throws -> Plan {
        // Encrypted stanzas (web, and Apple app instances with keys) are each their own.
        let cacheKey =
            registration.platform == .web || registration.webKeys != nil
            ? nil
            : StanzaCache.Key(
                platform: registration.platform, appID: registration.appID, sender: registration.sender,
                subtype: registration.subtype, isRelayedToFCM: registration.isRelayedToFCM)
        let tailored: (options: DeliveryOptions, stanza: [UInt8], signal: [UInt8])
        if let cacheKey, let cached = cache.entries[cacheKey] {
            tailored = cached
        } else {
            let options = DeliveryOptions(
                message: message, platform: registration.platform, appID: registration.appID,
                limits: project.settings.message, now: now)
            let context = DeliveryTailor.Context(
                messageID: id, registration: registration, project: project, sentAt: now, options: options)
            tailored = (
                options, try DeliveryTailor.stanza(for: message, context).serializedBytes(),
                try DeliveryTailor.deletionSignal(for: registration).serializedBytes()
            )
            if let cacheKey { cache.entries[cacheKey] = tailored }
        }
        let options = tailored.options
        let key = DeliveryStatKey(
            projectID: project.id, at: now, appID: registration.appID, label: message.analyticsLabel)
        var entry = QueuedMessage(
            androidID: registration.androidID, token: registration.token, persistentID: persistentID ?? id,
            messageID: id, projectID: project.id, stanza: tailored.stanza, createdAt: now,
            expiresAt: now.adding(seconds: options.ttlSeconds), collapseKey: options.collapseKey,
            isHighPriority: options.isHighPriority, appID: registration.appID,
            analyticsLabel: message.analyticsLabel ?? "", deletionSignalStanza: tailored.signal,
            keepsEvents: keepsEvents)
        if try await isInactive(registration, project: project, now: now, lastConnected: lastConnected) {
            // SEMANTICS L5: accepted and discarded; a signal waits four weeks for the device.
            let dropped = entry.stat(.droppedDeviceInactive)
            entry.deletedCount = 1
            return Plan(entry: entry, immediate: nil, stats: [DeliveryStat(key, .accepted), dropped])
        }
        if options.ttlSeconds == 0, registration.isHandedOff {
            // SEMANTICS D6 through APNs or FCM: handed off once with a time to live of 0,
            // queued only until the hand-off.
            entry.expiresAt = now.adding(seconds: Self.handoverSeconds)
            return Plan(entry: entry, immediate: nil, stats: [DeliveryStat(key, .accepted)])
        }
        if options.ttlSeconds == 0 {
            // SEMANTICS D6: now or never, never stored; the caller counts delivered or expired.
            return Plan(entry: nil, immediate: entry, stats: [DeliveryStat(key, .accepted)])
        }
        return Plan(entry: entry, immediate: nil, stats: [DeliveryStat(key, .accepted)])
    }

    /// The plan for a single send, with nothing to share (`lastConnected` as above).
    public func plan(
        _ message: HeraldCore.Message, id: String, registration: Registration, project: Project, now: Timestamp,
        lastConnected: Timestamp?? = nil
    ) async throws -> Plan {
        var cache = StanzaCache()
        return try await plan(
            message, id: id, registration: registration, project: project, now: now, lastConnected: lastConnected,
            cache: &cache)
    }

    /// Hands a TTL-0 message to its device's connection here; answers the counter to add.
    private func deliverNow(_ message: QueuedMessage) -> DeliveryStat {
        let delivered = path.deliverNow(androidID: message.androidID, message)
        return message.stat(delivered ? .delivered : .expired)
    }

    /// How long a TTL-0 message may wait in a queue while it goes to the node holding its
    /// device's connection.
    public static let handoverSeconds: Int64 = 10

    /// Delivers TTL-0 messages now (SEMANTICS D6): to connections on this node at once; with
    /// several nodes, those whose device another node holds become queue entries that live
    /// only for the hop (`handoverSeconds`). Answers those entries and the counters for the rest.
    public func deliverNow(_ messages: [QueuedMessage], now: Timestamp) async throws -> (
        handOver: [QueuedMessage], stats: [DeliveryStat]
    ) {
        var stats: [DeliveryStat] = []
        var missed: [QueuedMessage] = []
        for message in messages {
            let outcome = deliverNow(message)
            if outcome.counter == .expired { missed.append(message) } else { stats.append(outcome) }
        }
        guard !missed.isEmpty, cluster.isShared else {
            return ([], stats + missed.map { $0.stat(.expired) })
        }
        let held = try await cluster.remoteHolders(androidIDs: missed.map(\.androidID))
        var handOver: [QueuedMessage] = []
        for message in missed {
            guard held[message.androidID] != nil else {
                stats.append(message.stat(.expired))
                continue
            }
            var entry = message
            entry.expiresAt = now.adding(seconds: Self.handoverSeconds)
            handOver.append(entry)
        }
        return (handOver, stats)
    }

    /// Whether the device has not connected for longer than the project allows (SEMANTICS L5).
    func isInactive(_ registration: Registration, project: Project, now: Timestamp, lastConnected: Timestamp??)
        async throws
        -> Bool
    {
        // APNs and FCM say when an app instance they reach is gone (SEMANTICS A4, R4).
        if registration.isHandedOff || path.isConnected(androidID: registration.androidID) { return false }
        let known: Timestamp?
        if let lastConnected {
            known = lastConnected
        } else {
            known = try await store.device(androidID: registration.androidID)?.lastConnectedAt
        }
        let lastSeen = known ?? registration.createdAt
        return now.milliseconds - lastSeen.milliseconds > Int64(project.settings.inactiveAfterDays) * 86_400_000
    }
}
