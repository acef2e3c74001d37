public import HeraldCore
import Synchronization

/// SEMANTICS T5 on one node: how many XMPP connections a project may open a minute
/// (`xmpp-connects-per-minute`) and hold at once (`xmpp-connections`).
public final class XMPPConnectionLimits: Sendable {
    private struct Usage {
        var open = 0
        var minute: Int64 = 0
        var connectsThisMinute = 0
    }

    private let usage: Mutex<[String: Usage]> = Mutex([:])

    public init() {}

    /// Counts a new connection of `project` at `now`; false, counting nothing, past either limit.
    public func admit(_ project: Project, now: Timestamp) -> Bool {
        let minute = now.milliseconds / 60_000
        return usage.withLock { usage in
            var entry = usage[project.id, default: Usage()]
            if entry.minute != minute { (entry.minute, entry.connectsThisMinute) = (minute, 0) }
            guard entry.open < project.settings.xmppConnections,
                entry.connectsThisMinute < project.settings.xmppConnectsPerMinute
            else { return false }
            entry.open += 1
            entry.connectsThisMinute += 1
            usage[project.id] = entry
            return true
        }
    }

    /// A connection `admit` counted has closed.
    public func release(projectID: String) {
        usage.withLock { usage in
            usage[projectID]?.open -= 1
        }
    }

    /// The connections a project holds.
    public func openConnections(projectID: String) -> Int {
        usage.withLock { $0[projectID]?.open ?? 0 }
    }
}
