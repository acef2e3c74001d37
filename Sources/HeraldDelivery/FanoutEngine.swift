import DequeModule
public import HeraldCore
public import HeraldStorage
public import HeraldTelemetry
public import Logging
import Synchronization

/// Expands topic, condition and device-group sends (SEMANTICS T3): each accepted fanout
/// is a durable job whose audience is read in pages of registrations, never all at once.
///
/// A job first reaches the app instances on the devices connected when it starts (to this
/// node, then, with several nodes, to the others), a page of devices at a time, so that
/// those online get the message before the queues of the offline ones are written; then
/// every other registration in token order.
///
/// Jobs take turns a page at a time: first round robin over projects, then over a
/// project's jobs, so two fanouts of one project progress at the same rate and one
/// project's fanouts cannot starve another's. A project runs at most `maxFanouts` jobs;
/// further ones wait, and a send is refused only when that wait list is full. Every page
/// is stored with the job's cursor in one transaction, so after a restart a job resumes
/// after its last stored page.
public actor FanoutEngine {
    private let store: any FanoutStore & TopicStore & RegistrationStore
    /// The nodes sharing the store: their devices come right after this node's.
    private let cluster: any Cluster
    private let clock: any HeraldClock
    private let metrics: HeraldMetrics
    private let path: DeliveryPath
    private let planner: DeliveryPlanner
    private let projects: @Sendable (String) -> Project?
    private let logger: Logger
    /// Registrations per page.
    public let pageSize: Int
    /// How many first devices the running jobs may hold in all: a job that would pass it
    /// starts in token order only, so that many fanouts on a node with many connections
    /// keep memory bounded (each first device costs about 30 bytes while its job runs).
    public let firstDeviceBudget: Int
    /// How long a page waits for the devices connected here to acknowledge it before it
    /// is written; nil: it is written at once, and their rows deleted when they do.
    public let settle: DeliveryPath.Settle?

    private var running: [String: Deque<FanoutJob>] = [:]
    private var waiting: [String: Deque<FanoutJob>] = [:]
    private var projectTurns: Deque<String> = []
    /// The message ids of the jobs running or waiting here: a job stored and handed over
    /// while the engine loads the stored ones arrives twice, and is queued once.
    private var held: Set<String> = []
    private let signals: AsyncStream<Void>
    private let signal: AsyncStream<Void>.Continuation
    /// Jobs submitted and not yet taken in by the engine, and how many jobs of each project
    /// wait (submitted, or in its wait list): `submit` and `hasRoom` need no turn on the
    /// actor, so a send hands its job over without hopping to the engine and back.
    private let intake = Mutex(Intake())

    private struct Intake {
        var submitted: [FanoutJob] = []
        var waiting: [String: Int] = [:]
    }

    /// A page waits for acknowledgements while they keep coming (a gap of 10 ms ends the
    /// wait), at most a quarter of a second: devices on a fast network answer within it,
    /// and the offline devices of the page wait no longer than that for their rows.
    public static let defaultSettle = DeliveryPath.Settle(quiet: .milliseconds(10), limit: .milliseconds(250))

    /// How many fanouts may wait per project for every one allowed to run.
    public static let waitingFactor = 10

    public init(
        store: any FanoutStore & TopicStore & RegistrationStore, clock: any HeraldClock, metrics: HeraldMetrics,
        path: DeliveryPath,
        projects: @escaping @Sendable (String) -> Project?, logger: Logger, pageSize: Int = 2000,
        firstDeviceBudget: Int = 500_000, settle: DeliveryPath.Settle? = FanoutEngine.defaultSettle,
        cluster: any Cluster = SingleNodeCluster()
    ) {
        self.store = store
        self.cluster = cluster
        self.clock = clock
        self.metrics = metrics
        self.path = path
        self.planner = DeliveryPlanner(store: store, path: path, cluster: cluster)
        self.projects = projects
        self.logger = logger
        self.pageSize = pageSize
        self.firstDeviceBudget = firstDeviceBudget
        self.settle = settle
        (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Whether a project may submit another fanout: its wait list is not full.
    public nonisolated func hasRoom(for project: Project) -> Bool {
        let waiting = intake.withLock { $0.waiting[project.id, default: 0] }
        return waiting < max(1, project.settings.maxFanouts) * Self.waitingFactor
    }

    /// Takes a job that was stored with `HeraldStore.createFanout`; the engine takes it in
    /// at its next step.
    public nonisolated func submit(_ job: FanoutJob) {
        intake.withLock { intake in
            intake.submitted.append(job)
            intake.waiting[job.projectID, default: 0] += 1
        }
        signal.yield()
    }

    /// Queues the jobs submitted since the last call, in the order they came; they were
    /// counted as waiting when submitted, so only those that do not wait are uncounted.
    private func takeSubmitted() {
        let submitted = intake.withLock { intake -> [FanoutJob] in
            defer { intake.submitted = [] }
            return intake.submitted
        }
        for job in submitted where place(job) != .waiting {
            intake.withLock { $0.waiting[job.projectID, default: 1] -= 1 }
        }
    }

    /// Loads the unfinished jobs from the store, then expands pages until cancelled.
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.pageReads.run() }
            readsAhead = true
            defer {
                readsAhead = false
                pageReads.finish()
                group.cancelAll()
            }
            try await resume()
            var pendingSignals = signals.makeAsyncIterator()
            while !Task.isCancelled {
                if try await step() == nil {
                    guard await pendingSignals.next() != nil else { return }
                }
            }
        }
    }

    /// Loads unfinished jobs from the store (after a restart).
    public func resume() async throws {
        let stored = try await store.unfinishedFanouts()
        takeSubmitted()
        for job in stored where place(job) == .waiting {
            intake.withLock { $0.waiting[job.projectID, default: 0] += 1 }
        }
    }

    /// Expands one page of the job whose turn it is; answers its message id, nil when no job runs.
    @discardableResult
    public func step() async throws -> String? {
        takeSubmitted()
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
            // However it ended (done, its project gone, taken over by another node).
            expansions[job.messageID] = nil
            held.remove(job.messageID)
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
        takeSubmitted()
        return (running[projectID]?.count ?? 0, waiting[projectID]?.count ?? 0)
    }

    private enum Placement {
        case alreadyHeld, running, waiting
    }

    /// Puts a job the engine does not hold yet among its project's running jobs, or at the
    /// end of its project's wait list when that many run.
    private func place(_ job: FanoutJob) -> Placement {
        guard held.insert(job.messageID).inserted else { return .alreadyHeld }
        let limit = max(1, projects(job.projectID)?.settings.maxFanouts ?? 1000)
        var jobs = running[job.projectID] ?? []
        guard jobs.count < limit else {
            waiting[job.projectID, default: []].append(job)
            return .waiting
        }
        if jobs.isEmpty { projectTurns.append(job.projectID) }
        jobs.append(job)
        running[job.projectID] = jobs
        return .running
    }

    private func promoteWaiting(projectID: String, into jobs: inout Deque<FanoutJob>) {
        let limit = max(1, projects(projectID)?.settings.maxFanouts ?? 1000)
        while jobs.count < limit, let next = waiting[projectID]?.popFirst() {
            jobs.append(next)
            intake.withLock { $0.waiting[projectID, default: 1] -= 1 }
        }
    }

    /// Expands the next page of a job; answers whether the job is finished.
    private func expandPage(of job: FanoutJob) async throws -> Bool {
        guard let project = projects(job.projectID), let expansion = try await expansion(of: job) else {
            // The project was deleted or the body cannot be read: nothing left to deliver.
            _ = try? await store.storeFanoutPage(
                messageID: job.messageID, queue: [], firstDone: job.firstDone, cursor: job.cursor, reached: 0,
                done: true, limits: .unlimited, stats: [])
            return true
        }
        let (message, first, position) = (expansion.message, expansion.first, expansion.position)
        let page: Page
        if let prefetched, prefetched.messageID == job.messageID, prefetched.position == position {
            page = try await prefetched.page.value
        } else {
            page = try await preparePage(job, project: project, message: message, at: position, first: first)
        }
        prefetched = nil
        let now = clock.now()
        let done = page.finished || job.expiresAt <= now
        // The next page is read and planned while this one is written.
        prefetchPage(after: job, next: page.next, finished: done)
        let reached = page.entries.count + page.immediate.count
        let (handOver, delivered) = try await planner.deliverNow(page.immediate, now: now)
        // Usually nothing is handed over: the page's entries are then not copied.
        let entries = handOver.isEmpty ? page.entries : page.entries + handOver
        let stats = page.stats + delivered
        let (firstDone, cursor) = page.next.cursors(first: first, job: job)
        let limits = QueueLimits(project.settings)
        // Devices connected here get the message before the page is written; those that
        // acknowledge it within `settle` need no row.
        let acknowledged = try await path.deliver(entries, maximumPending: limits.maximumPending, settle: settle) {
            toWrite, acknowledged in
            try await store.storeFanoutPage(
                messageID: job.messageID, queue: toWrite, firstDone: firstDone, cursor: cursor,
                reached: reached, done: done, limits: limits, stats: stats + acknowledged.map { $0.stat(.delivered) })
        }
        metrics.increment("herald_fanout_acknowledged_before_written_total", by: acknowledged.count)
        expansions[job.messageID]?.position = page.next
        metrics.increment(
            "herald_fanout_deliveries_total", [("project", project.id)], by: reached)
        if done { logger.debug("fanout finished", metadata: ["message": "\(job.messageID)"]) }
        return done
    }

    /// Where a job's next page starts: at an index into its first devices, or after a token.
    enum Position: Hashable, Sendable {
        case device(Int)
        case token(String)

        /// The job's stored cursors (`FanoutJob.firstDone` and `cursor`) at this position.
        func cursors(first: FirstPass, job: FanoutJob) -> (firstDone: Int, cursor: String) {
            switch self {
            case .device(let index): (index, job.cursor)
            case .token(let token): (first.devices.count, token)
            }
        }
    }

    /// A started job's first devices, also as a set to leave them out of the token pages.
    struct FirstPass: Sendable {
        var devices: [UInt64]
        var set: Set<UInt64>

        init(_ devices: [UInt64]) {
            self.devices = devices
            self.set = Set(devices)
        }
    }

    /// What the engine keeps of a job it has started expanding: the message, parsed once,
    /// the first devices and where the next page starts.
    struct Expansion: Sendable {
        var message: HeraldCore.Message
        var first: FirstPass
        var position: Position
    }

    private var expansions: [String: Expansion] = [:]

    /// One page of a job's audience, planned: the queue entries to store, the TTL-0
    /// messages to deliver now and the counters to add; where the next page starts and
    /// whether this one was the last.
    struct Page: Sendable {
        var entries: [QueuedMessage] = []
        var immediate: [QueuedMessage] = []
        var stats: [DeliveryStat] = []
        var next: Position
        var finished: Bool
    }

    /// The next page being read and planned while the current one is written.
    private var prefetched: (messageID: String, position: Position, page: PendingResult<Page>)?
    /// Runs the reads of the next pages while `run()` runs; a page is read ahead only then.
    private let pageReads = WorkQueue()
    private var readsAhead = false

    /// The job's expansion, made at its first turn; nil when its body cannot be read.
    private func expansion(of job: FanoutJob) async throws -> Expansion? {
        if let known = expansions[job.messageID] { return known }
        guard let message = Self.message(of: job) else { return nil }
        let first = FirstPass(try await firstDevices(of: job))
        let made = Expansion(
            message: message, first: first,
            position: job.firstDone < first.devices.count ? .device(job.firstDone) : .token(job.cursor))
        expansions[job.messageID] = made
        return made
    }

    /// The job's first devices; a job not started yet starts now with the devices connected
    /// when it starts, unless they would take the running jobs past `firstDeviceBudget`.
    ///
    /// A job goes in token order only, with nothing stored for it, when no device is
    /// connected or when its audience fits in one page (that page reaches it all at once,
    /// and a small topic on a node holding many devices must not read its audience device by
    /// device). Such a job stays queued, and one that is queued but has stored a page is
    /// past the point where first devices could be chosen.
    private func firstDevices(of job: FanoutJob) async throws -> [UInt64] {
        guard job.state == .queued, job.cursor.isEmpty else { return job.firstDevices }
        let connected = try await connectedDevices(for: job.audience)
        let chosen = expansions.values.reduce(0) { $0 + $1.first.devices.count }
        guard !connected.isEmpty, chosen + connected.count <= firstDeviceBudget,
            try await audience(job, projectID: job.projectID, after: "").count >= pageSize
        else { return [] }
        // In the order of the queue's device index, so that a page's rows land close together.
        let ordered = connected.sorted { Int64(bitPattern: $0) < Int64(bitPattern: $1) }
        return try await store.startFanout(messageID: job.messageID, firstDevices: ordered)
    }

    /// The devices connected here, then, with several nodes, those the other nodes hold
    /// (their nodes are signalled as rows are stored); none for a device group, whose few
    /// members need no such order.
    private func connectedDevices(for audience: FanoutJob.Audience) async throws -> [UInt64] {
        if case .deviceGroup = audience { return [] }
        let here = path.connectedDevices()
        guard cluster.isShared else { return here }
        let local = Set(here)
        return here + (try await cluster.devicesHeldElsewhere().filter { !local.contains($0) })
    }

    /// Starts reading the page that comes after this turn, mirroring `step()`: the
    /// project goes to the back of the line and the job to the back of its project's jobs.
    private func prefetchPage(after job: FanoutJob, next: Position, finished: Bool) {
        guard readsAhead else { return }
        let projectID = projectTurns.first ?? job.projectID
        var candidate: FanoutJob?
        if projectID == job.projectID {
            let others = (running[projectID] ?? []).filter { $0.messageID != job.messageID }
            candidate = others.first ?? (finished ? nil : job)
        } else {
            candidate = running[projectID]?.first
        }
        guard let candidate, let expansion = expansions[candidate.messageID],
            let project = projects(candidate.projectID)
        else { return }
        let position = candidate.messageID == job.messageID ? next : expansion.position
        let page = PendingResult<Page>()
        pageReads.submit {
            do {
                page.resolve(
                    .success(
                        try await self.preparePage(
                            candidate, project: project, message: expansion.message, at: position,
                            first: expansion.first)))
            } catch {
                page.resolve(.failure(error))
            }
        }
        prefetched = (candidate.messageID, position, page)
    }

    /// Reads the page of a job's audience at `position` and plans each of its registrations.
    private nonisolated func preparePage(
        _ job: FanoutJob, project: Project, message: HeraldCore.Message, at position: Position, first: FirstPass
    ) async throws -> Page {
        let (targets, next, finished) = try await readPage(job, projectID: project.id, at: position, first: first)
        var page = Page(next: next, finished: finished)
        let now = clock.now()
        guard job.expiresAt > now else { return page }
        let connections = try await store.lastConnections(androidIDs: targets.map(\.androidID))
        var cache = DeliveryPlanner.StanzaCache()
        for registration in targets {
            // One id per app instance on the device, so that two apps of one device both get it.
            let persistentID = job.messageID + "#" + registration.token.prefix(22)
            guard
                let plan = try? await planner.plan(
                    message, id: job.messageID, registration: registration, project: project, now: now,
                    persistentID: persistentID, lastConnected: .some(connections[registration.androidID] ?? nil),
                    keepsEvents: project.settings.perDeviceEvents, cache: &cache)
            else { continue }
            if var entry = plan.entry {
                entry.expiresAt = min(entry.expiresAt, job.expiresAt)
                page.entries.append(entry)
            }
            if let immediate = plan.immediate { page.immediate.append(immediate) }
            page.stats += plan.stats.filter { $0.counter != .accepted }
        }
        return page
    }

    /// The registrations of a job's audience on the page at `position`, where the next
    /// page starts and whether this one is the last.
    private nonisolated func readPage(_ job: FanoutJob, projectID: String, at position: Position, first: FirstPass)
        async throws -> (targets: [Registration], next: Position, finished: Bool)
    {
        switch position {
        case .device(let index):
            let devices = Array(first.devices[index..<min(index + pageSize, first.devices.count)])
            let candidates = try await audience(job, projectID: projectID, devices: devices)
            let end = index + devices.count
            return (
                try await matching(candidates, job: job), end < first.devices.count ? .device(end) : .token(job.cursor),
                false
            )
        case .token(let cursor):
            let candidates = try await audience(job, projectID: projectID, after: cursor)
            // The first devices' app instances had it already.
            let rest = first.set.isEmpty ? candidates : candidates.filter { !first.set.contains($0.androidID) }
            let next = candidates.last.map { FanoutPosition(cursor: cursor).advanced(past: $0).cursor } ?? cursor
            return (try await matching(rest, job: job), .token(next), candidates.count < pageSize)
        }
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

    /// The topics a page of a topic or condition audience is read by: nil for every
    /// registration of the project (a condition true with no subscriptions, such as
    /// `!'a' in topics`, reaches every app instance).
    private static func topics(of audience: FanoutJob.Audience) throws -> [String]? {
        switch audience {
        case .topic(let name):
            return [name]
        case .condition(let text):
            let condition = try Condition.parse(text)
            return condition.matches { _ in false } ? nil : Array(Set(condition.topicTerms)).sorted()
        case .deviceGroup:
            return []
        }
    }

    /// The candidate registrations on `devices`, the first devices of a job.
    private nonisolated func audience(_ job: FanoutJob, projectID: String, devices: [UInt64]) async throws
        -> [Registration]
    {
        try await store.audience(projectID: projectID, topics: Self.topics(of: job.audience), androidIDs: devices)
    }

    /// The next page of candidate registrations after `cursor`.
    private nonisolated func audience(_ job: FanoutJob, projectID: String, after cursor: String) async throws
        -> [Registration]
    {
        switch job.audience {
        case .topic, .condition:
            return try await store.audience(
                projectID: projectID, topics: Self.topics(of: job.audience), after: cursor, limit: pageSize)
        case .deviceGroup(let key):
            // A group has at most 20 members: read them all, then take the page.
            let members =
                try await store.deviceGroup(projectID: projectID, name: nil, notificationKey: key)?.members ?? []
            var registrations: [Registration] = []
            for token in members {
                if let registration = try await store.registration(token: token), registration.projectID == projectID,
                    registration.deletedAt == nil
                {
                    registrations.append(registration)
                }
            }
            return FanoutPosition(cursor: cursor).page(of: registrations, limit: pageSize)
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
