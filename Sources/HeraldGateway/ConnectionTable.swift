import Synchronization

/// Every open connection's inbox, so that one task can tick them all.
final class ConnectionTable: Sendable {
    private let state: Mutex<(next: UInt64, inboxes: [UInt64: SessionInbox])> = Mutex((1, [:]))

    func add(_ inbox: SessionInbox) -> UInt64 {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.inboxes[id] = inbox
            return id
        }
    }

    func remove(_ id: UInt64) {
        _ = state.withLock { $0.inboxes.removeValue(forKey: id) }
    }

    func broadcast(_ event: DeviceGateway.Event) {
        let inboxes = state.withLock { Array($0.inboxes.values) }
        for inbox in inboxes { inbox.post(event) }
    }

    var count: Int { state.withLock { $0.inboxes.count } }
}
