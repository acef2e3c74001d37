public import HeraldCore
public import HeraldStorage
public import HeraldTelemetry
import Synchronization

/// The rate limits of SEMANTICS T1, T2, T4 and T6, each read from the project's current
/// settings at every check, so that `herald project set` applies at once.
///
/// State is kept in memory on this node; windows and buckets that hold nothing are
/// forgotten, so memory follows the projects and devices that are busy now. Nodes sharing
/// a store exchange their project counts (`localCounts`, `setRemoteCounts`), and a project
/// quota then counts every node's messages.
public final class Quotas: Sendable {
    /// The project quotas that hold across nodes.
    public enum Shared: String, Sendable, CaseIterable {
        case downstream
        case topicOperations = "topic-ops"
    }

    private struct DeviceWindows {
        var minute = SlidingWindow(windowMilliseconds: 60_000, buckets: 60)
        var hour = SlidingWindow(windowMilliseconds: 3_600_000, buckets: 60)

        /// Counts one message if both windows have room; answers the wait otherwise (0 when counted).
        mutating func admit(perMinute: Int, perHour: Int, at now: Timestamp) -> Int64 {
            let wait = max(
                minute.wait(toFit: 1, limit: perMinute, at: now), hour.wait(toFit: 1, limit: perHour, at: now))
            if wait == 0 {
                minute.add(1, at: now)
                hour.add(1, at: now)
            }
            return wait
        }
    }

    private struct State {
        var downstream: [String: SlidingWindow] = [:]
        var topicOperations: [String: SlidingWindow] = [:]
        /// What other nodes counted, per shared quota and project.
        var remote: [Shared: [String: SlidingWindow]] = [:]
        var devices: [String: DeviceWindows] = [:]
        var collapsible: [String: (bucket: TokenBucket, capacity: Int, refill: Int64)] = [:]
        /// Sends of each project that the early check let through (`passOnDownstream`) and
        /// whose answers have not ended: each is counted by the route, or given back, before
        /// its answer ends. Kept exact by `endPassedOn`, never swept.
        var passedOn: [String: Int] = [:]
        var lastSweep = Timestamp(milliseconds: 0)
    }

    /// What a downstream check does with a send that fits.
    private enum Fitting {
        /// Counts it (the route).
        case admit
        /// Counts nothing.
        case check
        /// Counts it as passed on to the route, and makes room for the sends already passed
        /// on (the early check).
        case passOn
    }

    private let state = Mutex(State())
    /// Projects whose downstream sends were refused, until room for one comes back or for a
    /// second after the refusal, whichever is later: under a lock of its own, as every send
    /// asks it before the quota is counted.
    private let refusingUntil = Mutex<[String: Timestamp]>([:])
    private let metrics: HeraldMetrics?

    public init(metrics: HeraldMetrics? = nil) {
        self.metrics = metrics
    }

    // MARK: T1

    /// How a project whose send was admitted stands against its downstream quota.
    public enum Standing: Sendable, Equatable {
        /// No send of the project was refused lately.
        case withinQuota
        /// Sends of the project were refused lately (`isRefusingDownstream`): its admitted
        /// sends are an overloaded project's, to wait behind other projects' work.
        case refusedLately
    }

    /// Counts `count` downstream messages against the project's quota (SEMANTICS T1) and
    /// answers how the project stands, or throws `QUOTA_EXCEEDED` with the wait until they
    /// fit, counting nothing: the one admission of a send.
    @discardableResult
    public func admitDownstream(_ project: Project, count: Int = 1, now: Timestamp) throws(HeraldError) -> Standing {
        if let refusal = downstream(project, count: count, now: now, fitting: .admit) { throw refusal }
        return isRefusingDownstream(projectID: project.id, now: now) ? .refusedLately : .withinQuota
    }

    /// Whether the project's downstream sends were refused in the last second, or room for
    /// one has not come back since a refusal: one lookup, so that what answers early can ask
    /// it of every send, and check the quota itself (`passOnDownstream`) only for projects
    /// that may be past it. Room in a full window comes back a little at a time, as its
    /// oldest sends leave; the project stays marked meanwhile, so that its sends past the
    /// room are still answered early.
    public func isRefusingDownstream(projectID: String, now: Timestamp) -> Bool {
        refusingUntil.withLock { refusing in
            guard let until = refusing[projectID] else { return false }
            if until > now { return true }
            refusing[projectID] = nil
            return false
        }
    }

    /// What the project used of its quotas, as counted on this node and the counts other
    /// nodes shared with it: downstream messages in the last minute (T1) and topic
    /// subscription changes in the last second (T2).
    public func use(projectID: String, now: Timestamp) -> (downstream: Int, topicOperations: Int) {
        state.withLock { state in
            sweep(&state, now: now)
            let downstream =
                (state.downstream[projectID]?.count(at: now) ?? 0)
                + (state.remote[.downstream]?[projectID]?.count(at: now) ?? 0)
            let topicOperations =
                (state.topicOperations[projectID]?.count(at: now) ?? 0)
                + (state.remote[.topicOperations]?[projectID]?.count(at: now) ?? 0)
            return (downstream, topicOperations)
        }
    }

    /// The `QUOTA_EXCEEDED` error one more downstream message of the project would get now,
    /// counting nothing either way; nil when it fits.
    public func downstreamRefusal(_ project: Project, now: Timestamp) -> HeraldError? {
        downstream(project, count: 1, now: now, fitting: .check)
    }

    /// For the check that answers early: the `QUOTA_EXCEEDED` error one more downstream
    /// send of the project would get now if the sends it already let through and whose
    /// answers have not ended were counted too; nil when it fits, and it is then one of
    /// those, until `endPassedOn` is called for it once its answer ends. Sends of a project
    /// at its quota that arrive together then do not all find the same room and go on to
    /// be refused by the route, at many times the cost of an early answer. A send counted
    /// by the route stays one of them until its answer ends, so room is asked for it twice
    /// meanwhile: the early check errs towards the route, never past the quota.
    public func passOnDownstream(_ project: Project, now: Timestamp) -> HeraldError? {
        downstream(project, count: 1, now: now, fitting: .passOn)
    }

    /// The answer to a send that `passOnDownstream` let through has ended (or its
    /// connection closed before it).
    public func endPassedOn(projectID: String) {
        state.withLock { state in
            guard let passed = state.passedOn[projectID] else { return }
            state.passedOn[projectID] = passed > 1 ? passed - 1 : nil
        }
    }

    private func downstream(_ project: Project, count: Int, now: Timestamp, fitting: Fitting) -> HeraldError? {
        let limit = project.settings.downstreamPerMinute
        let wait = state.withLock { state -> Int64 in
            sweep(&state, now: now)
            let passed = fitting == .passOn ? state.passedOn[project.id, default: 0] : 0
            // More than the limit never fits: then the send fits only if sends passed on are
            // given back, and is refused for the shortest wait.
            let needed = count + passed
            let most = max(count, limit)
            // In place: a copy of the window (24 KB) would be made at every send.
            var wait = state.downstream[project.id, default: Self.minuteWindow()].wait(
                toFit: min(needed, most), limit: limit,
                besides: &state.remote[.downstream, default: [:]][project.id], at: now)
            if wait == 0, needed > most { wait = 1 }
            if wait == 0 {
                switch fitting {
                case .admit: state.downstream[project.id]?.add(count, at: now)
                case .passOn: state.passedOn[project.id] = passed + count
                case .check: break
                }
            }
            return wait
        }
        guard wait > 0 else { return nil }
        refusingUntil.withLock { $0[project.id] = Timestamp(milliseconds: now.milliseconds + max(wait, 1_000)) }
        metrics?.increment("herald_quota_rejections_total", [("project", project.id), ("quota", "downstream")])
        return HeraldError.quotaExceeded(
            subject: "projects/\(project.id)/downstream-per-minute", retryAfterSeconds: Self.seconds(wait),
            message: "The project sent more than \(limit) messages in the last minute.",
            legacyName: "MessageRateExceeded")
    }

    /// Takes back messages counted at `at` that ended in a way that does not count (a 429,
    /// or a server error).
    public func refundDownstream(projectID: String, count: Int = 1, at: Timestamp) {
        state.withLock { state in state.downstream[projectID]?.add(-count, at: at) }
    }

    // MARK: T2

    /// How many of `requested` topic subscription changes the project may make now
    /// (SEMANTICS T2); those granted are counted.
    public func admitTopicOperations(_ project: Project, requested: Int, now: Timestamp) -> Int {
        let limit = project.settings.topicOpsPerSecond
        let granted = state.withLock { state -> Int in
            sweep(&state, now: now)
            let counted =
                state.topicOperations[project.id, default: Self.secondWindow()].count(at: now)
                + (state.remote[.topicOperations]?[project.id]?.count(at: now) ?? 0)
            let granted = max(0, min(requested, limit - counted))
            state.topicOperations[project.id]?.add(granted, at: now)
            return granted
        }
        if granted < requested {
            metrics?.increment(
                "herald_quota_rejections_total", [("project", project.id), ("quota", "topic-ops")],
                by: requested - granted)
        }
        return granted
    }

    /// The T2 error for the v1 resource, which changes one subscription per request.
    public static func topicOperationsExceeded(_ project: Project) -> HeraldError {
        .quotaExceeded(
            subject: "projects/\(project.id)/topic-ops-per-second", retryAfterSeconds: 1,
            message: "The project changed more than \(project.settings.topicOpsPerSecond) topic subscriptions in "
                + "the last second.")
    }

    // MARK: T6

    /// Counts one message to an app instance (SEMANTICS T6), or throws `QUOTA_EXCEEDED`
    /// for that token (legacy `DeviceMessageRateExceeded`), counting nothing.
    public func admitDeviceMessage(token: String, project: Project, now: Timestamp) throws(HeraldError) {
        let wait = admitToDevice(token: token, settings: project.settings, now: now)
        if wait > 0 { throw deviceMessageRateExceeded(project, waitMilliseconds: wait) }
    }

    /// Counts one message to `token` under `settings`' T6 windows; 0 when counted,
    /// otherwise the milliseconds to wait.
    private func admitToDevice(token: String, settings: ProjectSettings, now: Timestamp) -> Int64 {
        state.withLock { state -> Int64 in
            sweep(&state, now: now)
            return state.devices[token, default: DeviceWindows()].admit(
                perMinute: settings.devicePerMinute, perHour: settings.devicePerHour, at: now)
        }
    }

    /// Counts one push message to a push channel (RFC 8030), which belongs to no project,
    /// under the default T6 limits; nil when counted, otherwise the seconds to wait.
    public func admitChannelMessage(token: String, now: Timestamp) -> Int? {
        let wait = admitToDevice(token: token, settings: ProjectSettings(), now: now)
        return wait > 0 ? Self.seconds(wait) : nil
    }

    /// The same limit counted from the messages every node stored for the app instance
    /// (a store shared by several nodes answers `recent`).
    public func checkDeviceMessage(recent: RecentMessages, project: Project, now: Timestamp) throws(HeraldError) {
        let settings = project.settings
        var wait: Int64 = 0
        if recent.minute >= settings.devicePerMinute {
            wait = (recent.oldestInMinute ?? now).milliseconds + 60_000 - now.milliseconds
        }
        if recent.hour >= settings.devicePerHour {
            wait = max(wait, (recent.oldestInHour ?? now).milliseconds + 3_600_000 - now.milliseconds)
        }
        if recent.minute >= settings.devicePerMinute || recent.hour >= settings.devicePerHour {
            throw deviceMessageRateExceeded(project, waitMilliseconds: max(1, wait))
        }
    }

    private func deviceMessageRateExceeded(_ project: Project, waitMilliseconds: Int64) -> HeraldError {
        let settings = project.settings
        metrics?.increment("herald_quota_rejections_total", [("project", project.id), ("quota", "device")])
        return HeraldError.quotaExceeded(
            subject: "projects/\(project.id)/device", retryAfterSeconds: Self.seconds(waitMilliseconds),
            message:
                "Too many messages to this app instance: at most \(settings.devicePerMinute) a minute and "
                + "\(settings.devicePerHour) an hour.",
            legacyName: "DeviceMessageRateExceeded")
    }

    // MARK: T4

    /// Takes a collapsible-message token for an app instance (SEMANTICS T4); answers nil
    /// when the message may go now, otherwise when the next token will be there.
    public func takeCollapsible(token: String, settings: ProjectSettings, now: Timestamp) -> Timestamp? {
        let capacity = settings.collapsibleBurst
        let refill = Int64(settings.collapsibleRefillSeconds) * 1000
        return state.withLock { state -> Timestamp? in
            sweep(&state, now: now)
            var bucket = state.collapsible[token]?.bucket ?? TokenBucket(capacity: capacity, now: now)
            defer { state.collapsible[token] = (bucket, capacity, refill) }
            if bucket.take(capacity: capacity, refillMilliseconds: refill, now: now) { return nil }
            return bucket.nextToken(capacity: capacity, refillMilliseconds: refill, now: now)
        }
    }

    // MARK: Sharing between nodes

    /// This node's counts of a shared quota: per project, what is still inside the window
    /// at `now`, summed per `exchangeMilliseconds`.
    public func localCounts(_ quota: Shared, now: Timestamp) -> [QuotaCount] {
        state.withLock { state in
            var windows = quota == .downstream ? state.downstream : state.topicOperations
            return windows.keys.sorted().flatMap { project in
                windows[project]!.counts(at: now, per: Self.exchangeMilliseconds).map {
                    QuotaCount(projectID: project, bucket: $0.start, count: $0.count)
                }
            }
        }
    }

    /// Replaces what other nodes counted of a shared quota.
    public func setRemoteCounts(_ quota: Shared, _ counts: [QuotaCount], now: Timestamp) {
        var windows: [String: SlidingWindow] = [:]
        for count in counts.sorted(by: { $0.bucket < $1.bucket }) where count.count > 0 {
            var window = windows[count.projectID] ?? Self.remoteWindow(for: quota)
            window.add(count.count, at: Timestamp(milliseconds: count.bucket))
            windows[count.projectID] = window
        }
        state.withLock { $0.remote[quota] = windows }
    }

    /// How far back a shared quota's counts matter.
    public static func windowMilliseconds(_ quota: Shared) -> Int64 {
        quota == .downstream ? 60_000 : 1_000
    }

    // MARK: Helpers

    /// A project's downstream messages counted on this node, in 10 ms buckets: a project
    /// at its quota gets room back as its sends of a minute ago leave, 10 ms at a time,
    /// not in lumps a tenth of a second apart (which would let its accepted sends through
    /// in bursts at many times its rate, and slow its neighbours while they pass).
    /// 24 KB for each project that sent in the last minute.
    static func minuteWindow() -> SlidingWindow { SlidingWindow(windowMilliseconds: 60_000, buckets: 6_000) }

    static func secondWindow() -> SlidingWindow { SlidingWindow(windowMilliseconds: 1_000, buckets: 10) }

    /// The periods in which nodes tell each other their counts (fewer rows for the store
    /// than this node's buckets).
    static let exchangeMilliseconds: Int64 = 100

    /// What other nodes counted, one bucket per exchanged period.
    static func remoteWindow(for quota: Shared) -> SlidingWindow {
        let window = windowMilliseconds(quota)
        return SlidingWindow(windowMilliseconds: window, buckets: Int(window / exchangeMilliseconds))
    }

    /// Whole seconds for `Retry-After`, at least one.
    static func seconds(_ milliseconds: Int64) -> Int { Int(max(1, (milliseconds + 999) / 1000)) }

    /// Forgets what holds nothing any more, at most once a minute.
    private func sweep(_ state: inout State, now: Timestamp) {
        guard now.milliseconds - state.lastSweep.milliseconds >= 60_000 else { return }
        state.lastSweep = now
        state.downstream = state.downstream.filter { _, window in
            var window = window
            return !window.isEmpty(at: now)
        }
        state.topicOperations = state.topicOperations.filter { _, window in
            var window = window
            return !window.isEmpty(at: now)
        }
        state.devices = state.devices.filter { _, windows in
            var windows = windows
            return !windows.hour.isEmpty(at: now)
        }
        // A full bucket is the same as a new one.
        state.collapsible = state.collapsible.filter { _, entry in
            var bucket = entry.bucket
            return !bucket.isFull(capacity: entry.capacity, refillMilliseconds: entry.refill, now: now)
        }
    }
}
