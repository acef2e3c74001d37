public import HeraldCore
public import HeraldDelivery
public import HeraldStorage
public import Logging
public import ServiceLifecycle

/// Deletes queued messages whose time to live has passed, counting them expired
/// (SEMANTICS D5), upstream messages no app server took in time (telling their devices),
/// Web Push receipts no sender read in four weeks, expired console sessions, error
/// counts older than `errorCountDays`, and events older than `eventRetentionDays` (SEMANTICS E4).
/// Expired messages are never delivered even before the sweep: queue reads leave them out.
public struct ExpirySweeper: Service {
    /// How many days of error counts are kept.
    public static let errorCountDays: Int64 = 31

    let store: any QueueStore & RegistrationStore & UpstreamStore & ConsoleStore & StatsStore & EventStore
    let upstream: UpstreamIntake?
    let clock: any HeraldClock
    let intervalSeconds: Int
    let abandonedAfterSeconds: Int64
    let eventRetentionDays: Int
    let logger: Logger

    public init(
        store: any QueueStore & RegistrationStore & UpstreamStore & ConsoleStore & StatsStore & EventStore,
        upstream: UpstreamIntake? = nil,
        clock: any HeraldClock,
        intervalSeconds: Int, abandonedAfterSeconds: Int64 = 86_400, eventRetentionDays: Int = 31, logger: Logger
    ) {
        self.eventRetentionDays = eventRetentionDays
        self.store = store
        self.upstream = upstream
        self.clock = clock
        self.intervalSeconds = intervalSeconds
        self.abandonedAfterSeconds = abandonedAfterSeconds
        self.logger = logger
    }

    /// Sweeps until nothing expired is left; answers how many entries were deleted.
    @discardableResult
    public func sweep() async throws -> Int {
        let total = try await Self.drain { try await store.deleteExpired(now: clock.now(), limit: $0) }
        while let upstream, try await upstream.expire(limit: Self.batch) == Self.batch {}
        _ = try await Self.drain { try await store.deleteExpiredPushReceipts(now: clock.now(), limit: $0) }
        _ = try await Self.drain { try await store.deleteExpiredConsoleValues(now: clock.now(), limit: $0) }
        let errorsKeptSince = clock.now().adding(seconds: -Self.errorCountDays * 86_400)
        _ = try await Self.drain { try await store.deleteErrorCounts(before: errorsKeptSince, limit: $0) }
        let eventsKeptSince = clock.now().adding(seconds: -Int64(eventRetentionDays) * 86_400)
        _ = try await Self.drain { try await store.deleteEvents(before: eventsKeptSince, limit: $0) }
        return total
    }

    /// Removes devices that checked in `abandonedAfterSeconds` ago or earlier and never
    /// registered nor connected, and installations as old that no registration names
    /// (check-ins need no credentials and installations only the public API key, so
    /// neither may pile up). Answers how many of both were removed.
    @discardableResult
    public func sweepAbandonedDevices() async throws -> Int {
        let cutoff = clock.now().adding(seconds: -abandonedAfterSeconds)
        return try await Self.drain { try await store.deleteAbandonedDevices(checkedInBefore: cutoff, limit: $0) }
            + Self.drain { try await store.deleteAbandonedInstallations(createdBefore: cutoff, limit: $0) }
    }

    /// How many rows one deletion takes at most.
    static let batch = 1000

    /// Runs `delete` (given the batch size, answering how many it removed) until a batch
    /// comes back short; answers how many were removed in all.
    static func drain(_ delete: (Int) async throws -> Int) async throws -> Int {
        var total = 0
        while true {
            let deleted = try await delete(batch)
            total += deleted
            if deleted < batch { return total }
        }
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    let deleted = try await sweep()
                    if deleted > 0 { logger.debug("expired messages removed", metadata: ["count": "\(deleted)"]) }
                    let abandoned = try await sweepAbandonedDevices()
                    if abandoned > 0 {
                        logger.info(
                            "abandoned check-ins and installations removed", metadata: ["count": "\(abandoned)"])
                    }
                } catch {
                    logger.warning("expiry sweep failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .seconds(intervalSeconds))
            }
        }
    }
}
