import DequeModule
import Dispatch
import NIOPosix
import Synchronization

/// The order in which HTTP requests' tasks get a thread, in two lanes: what waits in the
/// `first` lane runs before what waits in the `after` lane. A project driven past its quota
/// has its accepted sends moved to the `after` lane (SEMANTICS T1), so that they wait
/// behind every other project's requests instead of beside them, and a project under its
/// quota keeps its latency while another is overloaded. The lanes order waiting work only:
/// they never drop any, and the `after` lane still gets one turn in `firstRunsInARow + 1`,
/// so the overloaded project's accepted sends keep flowing while others are busy.
///
/// The lanes own no threads. Each job queued also asks for one turn on the event loop that
/// queued it (or on one of the server's loops, for a job queued elsewhere), and each turn
/// runs the job that is first by lane order when it starts, not necessarily the one that
/// asked for it. So a request's task runs on the thread that read the request, and a send
/// that waits for a device's acknowledgement goes on on the thread that read it, with no
/// hand-over to another pool and back. The lanes add a lock taken twice a job. What runs
/// in a lane must not block for long, as it holds up that loop's connections: slow work
/// (a password's hash, a new RSA key) goes to `NIOThreadPool`.
///
/// Each lane is a `TaskExecutor`: a task runs in a lane by preferring it
/// (`withTaskExecutorPreference`), and so do the default actors it calls, as Swift runs
/// those on the task's preferred executor. Such a task hops to and from an actor through
/// the lane's queue, never on the thread it runs on, so what runs in a lane should call
/// few actors.
public final class RequestLanes: Sendable {
    /// Which lane a job waits in.
    enum Lane: Sendable {
        case first
        case after
    }

    /// The lane for everything that is not known to be an overloaded project's.
    public let first: LaneExecutor
    /// The lane for an overloaded project's accepted sends.
    public let after: LaneExecutor
    /// At most this many jobs of the first lane run while one of the after lane waits.
    static let firstRunsInARow = 8

    fileprivate let queue: LaneQueue

    /// The process's lanes, over the server's event loops.
    public static let shared = RequestLanes(loops: .singleton)

    /// Lanes whose turns run on the loop that asks for one, else on the next of `loops`.
    convenience init(loops: MultiThreadedEventLoopGroup) {
        self.init { turn in loops.any().execute(turn) }
    }

    /// Lanes whose turns run on `pool`: a serial queue, to see the order of the jobs one at
    /// a time.
    convenience init(pool: DispatchQueue) {
        self.init { turn in pool.async(execute: turn) }
    }

    private init(turns: @escaping LaneQueue.Turns) {
        let queue = LaneQueue(turns: turns)
        self.queue = queue
        first = LaneExecutor(queue: queue, lane: .first)
        after = LaneExecutor(queue: queue, lane: .after)
    }

    /// Jobs waiting in each lane now.
    var waiting: (first: Int, after: Int) {
        queue.state.withLock { ($0.first.count, $0.after.count) }
    }
}

/// One lane of `RequestLanes`, as a task executor.
public final class LaneExecutor: TaskExecutor, Sendable {
    fileprivate let lane: RequestLanes.Lane
    fileprivate let queue: LaneQueue

    fileprivate init(queue: LaneQueue, lane: RequestLanes.Lane) {
        self.queue = queue
        self.lane = lane
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.enqueue(UnownedJob(job), on: asUnownedTaskExecutor(), lane: lane)
    }
}

/// The jobs of both lanes, and the turns asked for them: one turn a job.
private final class LaneQueue: Sendable {
    /// A job and the lane's executor it runs on.
    typealias Queued = (job: UnownedJob, executor: UnownedTaskExecutor)
    /// Asks for a turn: runs the function given, on some thread, once.
    typealias Turns = @Sendable (@escaping @Sendable () -> Void) -> Void

    struct State {
        var first = Deque<Queued>()
        var after = Deque<Queued>()
        var firstInARow = 0
    }

    let state = Mutex(State())
    let turns: Turns

    init(turns: @escaping Turns) {
        self.turns = turns
    }

    func enqueue(_ job: UnownedJob, on executor: UnownedTaskExecutor, lane: RequestLanes.Lane) {
        state.withLock { state in
            switch lane {
            case .first: state.first.append((job, executor))
            case .after: state.after.append((job, executor))
            }
        }
        turns { self.runNext() }
    }

    /// One turn: the job first by lane order now.
    private func runNext() {
        let next = state.withLock { state -> Queued? in
            if !state.after.isEmpty && (state.first.isEmpty || state.firstInARow >= RequestLanes.firstRunsInARow) {
                state.firstInARow = 0
                return state.after.removeFirst()
            }
            guard !state.first.isEmpty else { return nil }
            state.firstInARow = state.after.isEmpty ? 0 : state.firstInARow + 1
            return state.first.removeFirst()
        }
        guard let next else { return }
        next.job.runSynchronously(on: next.executor)
    }
}
