public import HeraldCore

extension HTTPEnvironment {
    /// Runs the work of an app server's send under the overload gate and the project's
    /// downstream quota (SEMANTICS T1): `count` messages are counted before the work and
    /// given back when it ends in a 429 or a server error. An overloaded project's accepted
    /// sends wait behind other projects' work.
    public func admittingDownstream<Answer: Sendable>(
        _ project: Project, count: Int = 1, surface: String, _ work: @Sendable () async throws -> Answer
    ) async throws -> Answer {
        guard sends.enter() else {
            metrics.increment("herald_overload_rejections_total", [("surface", surface)])
            throw HeraldError.unavailable(retryAfterSeconds: 1, "Herald is overloaded; retry later.")
        }
        defer { sends.leave() }
        let admittedAt = clock.now()
        try quotas.admitDownstream(project, count: count, now: admittedAt)
        do {
            guard quotas.isRefusingDownstream(projectID: project.id, now: admittedAt) else { return try await work() }
            metrics.increment("herald_sends_deferred_total", [("project", project.id)])
            return try await withTaskExecutorPreference(lanes.after) { try await work() }
        } catch let error as HeraldError where error.canonicalStatus.httpStatus < 429 {
            throw error
        } catch {
            quotas.refundDownstream(projectID: project.id, count: count, at: admittedAt)
            throw error
        }
    }
}
