import DequeModule
public import HeraldCore
public import HeraldStorage
public import Logging
import Synchronization

/// Expands topic, condition and device-group sends (SEMANTICS T3): each accepted fanout
/// is a durable job whose audience is read in pages of registrations, never all at once.
///
/// Jobs take turns a page at a time: first round robin over projects, then over a
/// project's jobs, so two fanouts of one project progress at the same rate and one
/// project's fanouts cannot starve another's. A project runs at most `maxFanouts` jobs;
/// further ones wait, and a send is refused only when that wait list is full. Every page
/// is stored with the job's cursor in one transaction, so after a restart a job resumes
/// after its last stored page.
public actor FanoutEngine {
    private let store: any HeraldStore
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let registry: DeviceRegistry
    private let planner: DeliveryPlanner
    private let projects: @Sendable (String) -> Project?
    private let logger: Logger
    /// Registrations per page.
    public let pageSize: Int

    private var running: [String: Deque<FanoutJob>] = [:]
    private var waiting: [String: Deque<FanoutJob>] = [:]
    private var projectTurns: Deque<String> = []
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation
    private let waitingCounts: Mutex<[String: Int]> = Mutex([:])

    /// How many fanouts may wait per project for every one allowed to run.
    public static let waitingFactor = 10

    public init(
        store: any HeraldStore, clock: any HeraldClock, metrics: HeraldMetrics, registry: DeviceRegistry,
        projects: @escaping @Sendable (String) -> Project?, logger: Logger, pageSize: Int = 500
    ) {
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.registry = registry
        self.planner = DeliveryPlanner(store: store, registry: registry)
        self.projects = projects
        self.logger = logger
        self.pageSize = pageSize
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Whether a project may submit another fanout: its wait list is not full.
    public nonisolated func hasRoom(for project: Project) -> Bool {
        waitingCounts.withLock { $0[project.id, default: 0] } < max(1, project.settings.maxFanouts) * Self.waitingFactor
    }

    /// Takes a job that was stored with `HeraldStore.createFanout`.
    public func submit(_ job: FanoutJob) {
        enqueue(job)
        signal.yield()
    }

    /// Loads the unfinished jobs from the store, then expands pages until cancelled.
    public func run() async throws {
        try await resume()
        var pendingSignals = signals.makeAsyncIterator()
        while !Task.isCancelled {
            if try await step() == nil {
                guard await pendingSignals.next() != nil else { return }
            }
        }
    }

    /// Loads unfinished jobs from the store (after a restart).
    public func resume() async throws {
        for job in try await store.unfinishedFanouts()
        where running[job.projectID]?.contains(where: { $0.messageID == job.messageID }) != true {
            enqueue(job)
        }
    }

    /// Expands one page of the job whose turn it is; answers its message id, nil when no job runs.
    @discardableResult
    public func step() async throws -> String? {
        guard let projectID = projectTurns.popFirst(), var jobs = running[projectID], let job = jobs.popFirst() else {
            return nil
        }
        let finished: Bool
        do {
            finished = try await expandPage(of: job)
        } catch is CancellationError {
            // Shutting down: the job resumes from its stored cursor on the next start.
            return nil
        } catch StoreError.notFound(let what) {
            // The job is gone from the store, or (several nodes) another node holds it now.
            logger.notice("fanout no longer held here", metadata: ["message": "\(job.messageID)", "reason": "\(what)"])
            finished = true
        } catch {
            logger.error("fanout page failed", metadata: ["message": "\(job.messageID)", "error": "\(error)"])
            finished = false
        }
        jobs = running[projectID] ?? jobs
        if finished {
            jobs.removeAll { $0.messageID == job.messageID }
            promoteWaiting(projectID: projectID, into: &jobs)
        } else if let index = jobs.firstIndex(where: { $0.messageID == job.messageID }) {
            // The job goes to the back of its project's line.
            let current = jobs.remove(at: index)
            jobs.append(current)
        }
        running[projectID] = jobs.isEmpty ? nil : jobs
        if !jobs.isEmpty { projectTurns.append(projectID) }
        return job.messageID
    }

    /// Jobs running or waiting, per project.
    public func jobCount(projectID: String) -> (running: Int, waiting: Int) {
        (running[projectID]?.count ?? 0, waiting[projectID]?.count ?? 0)
    }

    private func enqueue(_ job: FanoutJob) {
        let limit = max(1, projects(job.projectID)?.settings.maxFanouts ?? 1000)
        var jobs = running[job.projectID] ?? []
        if jobs.count < limit {
            let wasIdle = jobs.isEmpty
            jobs.append(job)
            running[job.projectID] = jobs
            if wasIdle { projectTurns.append(job.projectID) }
        } else {
            waiting[job.projectID, default: []].append(job)
            waitingCounts.withLock { $0[job.projectID, default: 0] += 1 }
        }
    }

    private func promoteWaiting(projectID: String, into jobs: inout Deque<FanoutJob>) {
        let limit = max(1, projects(projectID)?.settings.maxFanouts ?? 1000)
        while jobs.count < limit, let next = waiting[projectID]?.popFirst() {
            jobs.append(next)
            waitingCounts.withLock { $0[projectID, default: 1] -= 1 }
        }
    }

    /// Expands the next page of a job; answers whether the job is finished.
    private func expandPage(of job: FanoutJob) async throws -> Bool {
        guard let project = projects(job.projectID), let message = Self.message(of: job) else {
            // The project was deleted or the body cannot be read: nothing left to deliver.
            _ = try? await store.storeFanoutPage(
                messageID: job.messageID, queue: [], cursor: job.cursor, reached: 0, done: true, limits: .unlimited,
                stats: [])
            return true
        }
        if job.state == .queued { try await store.startFanout(messageID: job.messageID) }
        let cursor = currentCursor(job)
        let page: Page
        if let prefetched, prefetched.messageID == job.messageID, prefetched.cursor == cursor {
            page = try await prefetched.page.value
        } else {
            page = try await readPage(job, projectID: project.id, after: cursor)
        }
        prefetched = nil
        let now = clock.now()
        var entries: [QueuedMessage] = []
        var immediate: [QueuedMessage] = []
        var stats: [DeliveryStat] = []
        let done = page.candidates < pageSize || job.expiresAt <= now
        let next = page.lastToken ?? cursor
        prefetchPage(after: job, next: next, finished: done)
        if job.expiresAt > now {
            let connections = page.lastConnections
            var cache = DeliveryPlanner.StanzaCache()
            for registration in page.targets {
                // One id per app instance on the device, so that two apps of one device both get it.
                let persistentID = job.messageID + "#" + registration.token.prefix(22)
                guard
                    let plan = try? await planner.plan(
                        message, id: job.messageID, registration: registration, project: project, now: now,
                        persistentID: persistentID, lastConnected: .some(connections[registration.androidID] ?? nil),
                        cache: &cache)
                else { continue }
                if let entry = plan.entry {
                    var entry = entry
                    entry.expiresAt = min(entry.expiresAt, job.expiresAt)
                    entries.append(entry)
                }
                if let now = plan.immediate { immediate.append(now) }
                stats += plan.stats.filter { $0.counter != .accepted }
            }
        }
        let reached = entries.count + immediate.count
        let (handOver, delivered) = try await planner.deliverNow(immediate, now: now)
        entries += handOver
        stats += delivered
        let enqueued = try await store.storeFanoutPage(
            messageID: job.messageID, queue: entries, cursor: next, reached: reached,
            done: done,
            limits: QueueLimits(project.settings), stats: stats)
        cursors[job.messageID] = next
        for (entry, outcome) in zip(entries, enqueued) where entry.deletedCount == 0 { registry.stored(outcome.stored) }
        metrics.increment(
            "herald_fanout_deliveries_total", [("project", project.id)], by: reached)
        if done {
            cursors[job.messageID] = nil
            logger.debug("fanout finished", metadata: ["message": "\(job.messageID)"])
        }
        return done
    }

    private var cursors: [String: String] = [:]

    /// One page of a job's audience: how many candidates were read, the last one's token,
    /// those the audience really includes, and their devices' last connections.
    struct Page: Sendable {
        var candidates: Int
        var lastToken: String?
        var targets: [Registration]
        var lastConnections: [UInt64: Timestamp?]
    }

    /// The next page being read while the current one is written.
    private var prefetched: (messageID: String, cursor: String, page: Task<Page, any Error>)?

    /// Starts reading the page that comes after this turn, mirroring `step()`: the
    /// project goes to the back of the line and the job to the back of its project's jobs.
    private func prefetchPage(after job: FanoutJob, next: String, finished: Bool) {
        let projectID = projectTurns.first ?? job.projectID
        var candidate: FanoutJob?
        if projectID == job.projectID {
            let others = (running[projectID] ?? []).filter { $0.messageID != job.messageID }
            candidate = others.first ?? (finished ? nil : job)
        } else {
            candidate = running[projectID]?.first
        }
        guard let candidate else { return }
        let cursor = candidate.messageID == job.messageID ? next : currentCursor(candidate)
        prefetched = (
            candidate.messageID, cursor,
            Task { try await self.readPage(candidate, projectID: candidate.projectID, after: cursor) }
        )
    }

    private nonisolated func readPage(_ job: FanoutJob, projectID: String, after cursor: String) async throws -> Page {
        let candidates = try await audience(job, projectID: projectID, after: cursor)
        let targets = try await matching(candidates, job: job)
        return Page(
            candidates: candidates.count, lastToken: candidates.last?.token, targets: targets,
            lastConnections: try await store.lastConnections(androidIDs: targets.map(\.androidID)))
    }

    /// The message a job delivers: its stored body with the job's audience as target.
    static func message(of job: FanoutJob) -> HeraldCore.Message? {
        guard let body = try? JSONParser.parse(Array(job.body.utf8)) else { return nil }
        switch job.audience {
        case .topic(let name):
            return Message(target: .topic(name), body: body)
        case .condition(let text):
            guard let condition = try? Condition.parse(text) else { return nil }
            return Message(target: .condition(condition), body: body)
        case .deviceGroup(let key):
            return Message(target: .token(key), body: body)
        }
    }

    private func currentCursor(_ job: FanoutJob) -> String { cursors[job.messageID] ?? job.cursor }

    /// The next page of candidate registrations after `cursor`.
    private nonisolated func audience(_ job: FanoutJob, projectID: String, after cursor: String) async throws
        -> [Registration]
    {
        switch job.audience {
        case .topic(let name):
            return try await store.audience(projectID: projectID, topics: [name], after: cursor, limit: pageSize)
        case .condition(let text):
            let condition = try Condition.parse(text)
            // A condition true with no subscriptions (`!'a' in topics`) reaches every app instance.
            let topics = condition.matches { _ in false } ? nil : Array(Set(condition.topicTerms)).sorted()
            return try await store.audience(projectID: projectID, topics: topics, after: cursor, limit: pageSize)
        case .deviceGroup(let key):
            let members =
                try await store.deviceGroup(projectID: projectID, name: nil, notificationKey: key)?.members ?? []
            var registrations: [Registration] = []
            for token in members.sorted() where token > cursor {
                if let registration = try await store.registration(token: token), registration.projectID == projectID,
                    registration.deletedAt == nil
                {
                    registrations.append(registration)
                }
                if registrations.count == pageSize { break }
            }
            return registrations
        }
    }

    /// The candidates the job's audience really includes: for a condition, those whose
    /// subscriptions satisfy it; each app instance once, however many topics it matches.
    private nonisolated func matching(_ candidates: [Registration], job: FanoutJob) async throws -> [Registration] {
        guard case .condition(let text) = job.audience else { return candidates }
        let condition = try Condition.parse(text)
        let subscribed = try await store.topics(ofTokens: candidates.map(\.token))
        return candidates.filter { registration in
            let topics = subscribed[registration.token] ?? []
            return condition.matches { topics.contains($0) }
        }
    }
}
