public import HeraldCore
public import HeraldStorage
import Synchronization

/// One event stream's place on the node's `EventTail`: the events of its project the tail
/// handed it, waiting to be written. A stream that falls `maximumBuffered` behind is told
/// so, and reads what it missed from the store itself.
public final class EventTailSubscription: Sendable {
    /// What a stream takes next.
    public enum Next: Sendable, Equatable {
        /// Its project's new events, oldest first.
        case events([MessageEvent])
        /// It fell behind: the events through this sequence number are the store's to give.
        case behind(through: Int64)
        /// Nothing within the wait.
        case quiet
        /// The node stops.
        case ended
    }

    static let maximumBuffered = 10_000

    public let projectID: String
    /// The events through this sequence number are the stream's to read; the tail hands it
    /// every later one.
    public let joinedThrough: Int64

    private struct State {
        var buffered: [MessageEvent] = []
        var behindThrough: Int64?
        var ended: Bool
    }

    private let state: Mutex<State>
    private let arrived = WakeSignal()
    private let onLeave: @Sendable () -> Void

    init(projectID: String, joinedThrough: Int64, ended: Bool, onLeave: @escaping @Sendable () -> Void) {
        self.projectID = projectID
        self.joinedThrough = joinedThrough
        self.state = Mutex(State(ended: ended))
        self.onLeave = onLeave
    }

    /// The tail's events of this project, through sequence number `through`.
    func take(_ events: [MessageEvent], through: Int64) {
        state.withLock { state in
            guard !state.ended else { return }
            if state.behindThrough != nil || state.buffered.count + events.count > Self.maximumBuffered {
                state.buffered.removeAll()
                state.behindThrough = through
            } else {
                state.buffered += events
            }
        }
        arrived.wake()
    }

    func end() {
        state.withLock { $0.ended = true }
        arrived.wake()
    }

    /// What the stream writes next, waiting up to `timeout` for it.
    public func next(upTo timeout: Duration) async -> Next {
        let mark = arrived.mark()
        if let ready = ready() { return ready }
        await arrived.wait(after: mark, upTo: timeout)
        return ready() ?? .quiet
    }

    private func ready() -> Next? {
        state.withLock { state in
            if let through = state.behindThrough {
                state.behindThrough = nil
                return .behind(through: through)
            }
            if !state.buffered.isEmpty {
                defer { state.buffered.removeAll() }
                return .events(state.buffered)
            }
            return state.ended ? .ended : nil
        }
    }

    /// The stream closed: the tail hands it nothing more.
    public func leave() {
        end()
        onLeave()
    }
}
