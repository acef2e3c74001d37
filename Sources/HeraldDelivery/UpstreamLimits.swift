public import HeraldCore
import Synchronization

/// SEMANTICS T5 for upstream messages on one node: how many a project may send a minute
/// (`upstream-per-minute`) and how many one device may (`upstream-device-per-minute`),
/// counted in whole minutes.
public final class UpstreamLimits: Sendable {
    private struct Counts {
        var minute: Int64 = 0
        var projects: [String: Int] = [:]
        var devices: [UInt64: Int] = [:]
    }

    private let counts = Mutex(Counts())

    public init() {}

    /// Counts one message of `project` from `androidID` at `now`; false, counting nothing,
    /// past either limit.
    public func admit(_ project: Project, androidID: UInt64, now: Timestamp) -> Bool {
        let minute = now.milliseconds / 60_000
        return counts.withLock { counts in
            if counts.minute != minute { counts = Counts(minute: minute) }
            guard counts.projects[project.id, default: 0] < project.settings.upstreamPerMinute,
                counts.devices[androidID, default: 0] < project.settings.upstreamDevicePerMinute
            else { return false }
            counts.projects[project.id, default: 0] += 1
            counts.devices[androidID, default: 0] += 1
            return true
        }
    }
}
