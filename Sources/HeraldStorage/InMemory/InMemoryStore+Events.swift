public import HeraldCore

/// What became of every message (`EventStore`).
extension InMemoryStore {
    /// Keeps events, giving each the next sequence number.
    func keep(_ events: [MessageEvent]) {
        for var event in events {
            lastEventSequence += 1
            event.sequence = lastEventSequence
            eventLog.append(event)
        }
    }

    public func recordEvents(_ events: [MessageEvent]) {
        keep(
            events.map { event in
                var event = event
                event.node = nodeID
                return event
            })
    }

    /// Keeps the events and counts of `stats`' facts.
    func recordEvents(_ stats: [DeliveryStat]) {
        let now = SystemClock().now()
        let rows = EventRows(stats, node: nodeID, at: now)
        keep(rows.events)
        for (count, value) in rows.counts {
            messageCounts[count, default: (0, now)].value += value
        }
    }

    public func events(projectID: String, after: Int64, limit: Int, filter: EventFilter) -> [MessageEvent] {
        Array(
            eventLog.lazy.filter { $0.projectID == projectID && $0.sequence > after && filter.admits($0) }.prefix(limit)
        )
    }

    public func events(after: Int64, limit: Int) -> [MessageEvent] {
        Array(eventLog.lazy.filter { $0.sequence > after }.prefix(limit))
    }

    public func latestEventSequence() -> Int64 { eventLog.last?.sequence ?? 0 }

    /// Read by tests only: its readers look again after a while.
    public nonisolated var work: WorkSignals? { nil }

    public nonisolated var eventCommitLagMilliseconds: Int64 { 0 }

    public func messageStatus(projectID: String, messageID: String) -> MessageStatus? {
        let events = eventLog.filter { $0.messageID == messageID }
        guard let accepted = events.first(where: { $0.type == .accepted && $0.projectID == projectID }) else {
            return nil
        }
        var byType: [String: Int] = [:]
        for event in events { byType[event.type.rawValue, default: 0] += 1 }
        let counts = messageCounts.filter { $0.key.messageID == messageID }.map {
            ($0.key.type.rawValue, $0.value.value)
        }
        return EventRows.status(
            accepted: accepted, events: byType.map { ($0.key, $0.value) }, counts: counts,
            fanout: fanoutProgress(messageID: messageID).map { ($0.state.rawValue, $0.reached) })
    }

    public func deleteEvents(before: Timestamp, limit: Int) -> Int {
        let events = Set(eventLog.prefix(limit).filter { $0.at < before }.map(\.sequence))
        eventLog.removeAll { events.contains($0.sequence) }
        let counts = messageCounts.filter { $0.value.at < before }.prefix(limit).map(\.key)
        for key in counts { messageCounts[key] = nil }
        return events.count + counts.count
    }
}
