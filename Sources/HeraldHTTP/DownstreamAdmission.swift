public import HeraldCore
public import HeraldDelivery
public import HeraldTelemetry

/// Admits the work of an app server's send: under the overload gate, and counted once
/// against the project's downstream quota (SEMANTICS T1), which also says in which lane
/// the work waits. Shared by the v1 and legacy send routes and the console's sends.
public struct DownstreamAdmission: Sendable {
    public var quotas: Quotas
    /// Bounds the sends being worked on at once; past it a send is answered 503.
    public var sends: ConcurrencyGate
    /// The lanes in which HTTP requests' tasks wait for a thread: an overloaded project's
    /// accepted sends wait behind other projects' requests.
    public var lanes: RequestLanes
    public var clock: any HeraldClock
    public var metrics: HeraldMetrics

    public init(
        quotas: Quotas, sends: ConcurrencyGate, lanes: RequestLanes, clock: any HeraldClock, metrics: HeraldMetrics
    ) {
        self.quotas = quotas
        self.sends = sends
        self.lanes = lanes
        self.clock = clock
        self.metrics = metrics
    }

    /// Runs `work` once `count` messages of the project are admitted; they are given back
    /// when it ends in a 429 or a server error.
    public func admitting<Answer: Sendable>(
        _ project: Project, count: Int = 1, surface: String, _ work: @Sendable () async throws -> Answer
    ) async throws -> Answer {
        guard sends.enter() else {
            metrics.increment("herald_overload_rejections_total", [("surface", surface)])
            throw HeraldError.unavailable(retryAfterSeconds: 1, "Herald is overloaded; retry later.")
        }
        defer { sends.leave() }
        let admittedAt = clock.now()
        let standing = try quotas.admitDownstream(project, count: count, now: admittedAt)
        do {
            switch standing {
            case .withinQuota:
                return try await work()
            case .refusedLately:
                metrics.increment("herald_sends_deferred_total", [("project", project.id)])
                return try await withTaskExecutorPreference(lanes.after) { try await work() }
            }
        } catch let error as HeraldError where error.canonicalStatus.httpStatus < 429 {
            throw error
        } catch {
            quotas.refundDownstream(projectID: project.id, count: count, at: admittedAt)
            throw error
        }
    }
}
