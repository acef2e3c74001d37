public import HeraldCore
public import HeraldHTTP
public import HeraldStorage
public import Logging
public import ServiceLifecycle

/// Sends what the console scheduled once it is due, on every node: each node claims due
/// sends under a lease (`ScheduleStore`), so one node sends each; should that node stop
/// before it is done, another claims the send when the lease runs out, and sends it unless
/// its message was accepted already (it is stored under the id chosen when scheduled).
public struct ScheduledSender: Service {
    /// How long a node holds a send it claimed.
    static let leaseMilliseconds: Int64 = 10_000
    /// How often a store that gives no signal is asked for due sends.
    static let interval: Duration = .milliseconds(250)

    let store: any ScheduleStore & QueueStore
    /// Wakes the sender when a send is scheduled; nil for a store that does not tell.
    let work: WorkSignals?
    let sender: AdmittedSender
    let directory: CredentialDirectory
    let clock: any HeraldClock
    let logger: Logger

    public init(
        store: any ScheduleStore & QueueStore, work: WorkSignals?, sender: AdmittedSender,
        directory: CredentialDirectory, clock: any HeraldClock, logger: Logger
    ) {
        self.store = store
        self.work = work
        self.sender = sender
        self.directory = directory
        self.clock = clock
        self.logger = logger
    }

    /// Sends what is due, then waits until the next send falls due, one is scheduled
    /// (`WorkSignals`), or `WorkWaiter.defaultFallback` passes.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            var waiter = WorkWaiter(.scheduled, of: work, polling: Self.interval)
            while !Task.isCancelled {
                let mark = waiter.mark()
                var dueIn: Duration?
                do {
                    let next = try await store.nextClaimableSend()
                    if let next, next <= clock.now() {
                        while try await sendDue() > 0 {}
                        dueIn = .zero
                    } else if let next {
                        dueIn = .milliseconds(next.milliseconds - clock.now().milliseconds)
                    }
                } catch {
                    if !Task.isCancelled {
                        logger.warning("scheduled sends not claimed", metadata: ["error": "\(error)"])
                    }
                }
                await waiter.wait(after: mark, dueIn: dueIn)
            }
        }
    }

    /// Claims and sends what is due now; answers how many it claimed.
    @discardableResult
    public func sendDue(limit: Int = 20) async throws -> Int {
        let now = clock.now()
        let claimed = try await store.claimDueSends(
            now: now, until: now.adding(milliseconds: Self.leaseMilliseconds), limit: limit)
        for scheduled in claimed { await send(scheduled) }
        return claimed.count
    }

    private func send(_ scheduled: ScheduledSend) async {
        let name = { (project: String, id: String) in "projects/\(project)/messages/\(id)" }
        do {
            if scheduled.attempts > 1, try await store.message(id: scheduled.messageID) != nil {
                // The node that claimed it before accepted it and stopped before saying so.
                try await store.finishScheduledSend(
                    id: scheduled.id, state: .sent, outcome: name(scheduled.projectID, scheduled.messageID))
                return
            }
            guard let project = directory.project(named: scheduled.projectID) else {
                throw HeraldError.notFound("The project \(scheduled.projectID) no longer exists.")
            }
            let request = try SendRequest.decode(Array(scheduled.body.utf8), limits: project.settings.message)
            let id = try await sender.send(request, project: project, messageID: scheduled.messageID)
            try await store.finishScheduledSend(id: scheduled.id, state: .sent, outcome: name(project.id, id))
            logger.info(
                "scheduled send sent", metadata: ["project": "\(project.id)", "scheduled": "\(scheduled.id)"])
        } catch let error as HeraldError where error.canonicalStatus.httpStatus < 429 {
            // Refused for what it is: sending it again would be refused again.
            _ = try? await store.finishScheduledSend(id: scheduled.id, state: .failed, outcome: error.message)
            logger.notice(
                "scheduled send refused", metadata: ["scheduled": "\(scheduled.id)", "error": "\(error.message)"])
        } catch {
            // A quota, an overload or the store: claimed again when the lease runs out.
            logger.warning(
                "scheduled send postponed", metadata: ["scheduled": "\(scheduled.id)", "error": "\(error)"])
        }
    }
}
