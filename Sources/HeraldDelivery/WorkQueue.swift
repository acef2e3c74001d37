/// Work handed over by code that cannot wait for it (a channel handler on its event loop),
/// run as child tasks of the service that runs the queue rather than as unstructured tasks,
/// so that a shutdown waits for it and cancels it.
public final class WorkQueue: Sendable {
    /// One piece of work.
    public typealias Job = @Sendable () async -> Void

    private let jobs: AsyncStream<Job>
    private let submissions: AsyncStream<Job>.Continuation

    public init() {
        (jobs, submissions) = AsyncStream.makeStream(of: Job.self)
    }

    /// Queues `job`; it starts as soon as `run()` takes it. Dropped once the queue has finished.
    public func submit(_ job: @escaping Job) {
        submissions.yield(job)
    }

    /// Runs every submitted job as a child task until cancelled or `finish()`, then waits
    /// for the jobs still running.
    public func run() async {
        await withDiscardingTaskGroup { group in
            for await job in jobs {
                group.addTask { await job() }
            }
        }
    }

    /// Takes no more work; `run()` returns once the running jobs are done.
    public func finish() {
        submissions.finish()
    }
}
