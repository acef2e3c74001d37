public import HeraldCore

/// Sends scheduled for later (`ScheduleStore`).
extension InMemoryStore {
    public func addScheduledSend(_ send: ScheduledSend) { scheduled[send.id] = send }

    public func scheduledSends(projectID: String, limit: Int) -> [ScheduledSend] {
        Array(
            scheduled.values.filter { $0.projectID == projectID }.sorted { ($0.dueAt, $0.id) > ($1.dueAt, $1.id) }
                .prefix(limit))
    }

    public func cancelScheduledSend(projectID: String, id: String) -> Bool {
        guard let send = scheduled[id], send.projectID == projectID, send.state == .waiting else { return false }
        scheduled[id]?.state = .cancelled
        return true
    }

    public func claimDueSends(now: Timestamp, until: Timestamp, limit: Int) -> [ScheduledSend] {
        let due = scheduled.values.filter {
            ($0.state == .waiting && $0.dueAt <= now) || ($0.state == .sending && $0.leasedUntil <= now)
        }
        return due.sorted { ($0.dueAt, $0.id) < ($1.dueAt, $1.id) }.prefix(limit).map { send in
            var claimed = send
            claimed.state = .sending
            claimed.attempts += 1
            claimed.leasedUntil = until
            scheduled[send.id] = claimed
            return claimed
        }
    }

    public func nextClaimableSend() -> Timestamp? {
        scheduled.values.compactMap { send -> Timestamp? in
            switch send.state {
            case .waiting: send.dueAt
            case .sending: send.leasedUntil
            default: nil
            }
        }.min()
    }

    public func finishScheduledSend(id: String, state: ScheduledSend.State, outcome: String) -> Bool {
        guard scheduled[id]?.state == .sending else { return false }
        scheduled[id]?.state = state
        scheduled[id]?.outcome = outcome
        return true
    }
}
