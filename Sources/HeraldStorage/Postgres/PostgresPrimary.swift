import Logging
import Synchronization

/// Which of a store's hosts is the writable primary, for a store given several
/// (`Location.hosts`). Each host is asked twice a second whether it takes writes; the
/// primary is the first host whose last answer, under three seconds old, says it does. A
/// statement that fails the way a lost or demoted primary fails makes it suspect at once
/// (`suspect`): statements then fail fast (`StoreError.unavailable`) until a host answers
/// writable after that moment. With one host there is nothing to find: it is the one.
final class PostgresPrimary: Sendable {
    let hosts: [PostgresStore.Location.Host]
    private let state: Mutex<State>
    /// How often each host is asked, and how old its last answer may be.
    static let probeInterval: Duration = .milliseconds(500)
    static let answerLifetime: Duration = .seconds(3)

    struct Answer {
        var writable: Bool
        var at: ContinuousClock.Instant
    }

    struct State {
        var current: Int?
        var answers: [Int: Answer] = [:]
        var suspectedAt: [Int: ContinuousClock.Instant] = [:]
        /// Whether the loss of a primary was logged (once an outage).
        var warned = false

        /// Keeps the primary while its answers say it is one; chooses another otherwise.
        /// Answers the new primary when it changed to a host.
        mutating func decide(now: ContinuousClock.Instant, hosts: Int) -> Int? {
            func usable(_ host: Int) -> Bool {
                guard let answer = answers[host], answer.writable,
                    now - answer.at < PostgresPrimary.answerLifetime
                else { return false }
                return suspectedAt[host].map { answer.at > $0 } ?? true
            }
            if let current, !usable(current) { self.current = nil }
            guard current == nil, let found = (0..<hosts).first(where: usable) else { return nil }
            current = found
            return found
        }
    }

    init(hosts: [PostgresStore.Location.Host]) {
        self.hosts = hosts
        state = Mutex(State(current: hosts.count == 1 ? 0 : nil))
    }

    /// The primary's index, or nil while none is known.
    var index: Int? { state.withLock { $0.current } }

    /// A statement on `index` failed the way a lost or demoted primary fails.
    func suspect(_ index: Int) {
        guard hosts.count > 1 else { return }
        let now = ContinuousClock.now
        state.withLock { state in
            state.suspectedAt[index] = now
            if state.current == index { state.current = nil }
        }
    }

    /// Asks every host until cancelled. `probe` answers whether a host is writable, or nil
    /// when it could not be asked; a host whose question hangs just stops answering.
    func watch(logger: Logger, probe: @escaping @Sendable (Int) async -> Bool?) async {
        guard hosts.count > 1 else { return }
        await withDiscardingTaskGroup { group in
            for host in hosts.indices {
                group.addTask {
                    while !Task.isCancelled {
                        let writable = await probe(host)
                        let now = ContinuousClock.now
                        self.state.withLock { state in
                            state.answers[host] = writable.map { Answer(writable: $0, at: now) }
                        }
                        try? await Task.sleep(for: Self.probeInterval)
                    }
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    self.decide(logger: logger)
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
        }
    }

    private func decide(logger: Logger) {
        let now = ContinuousClock.now
        let (found, lost) = state.withLock { state -> (Int?, Bool) in
            let found = state.decide(now: now, hosts: hosts.count)
            if found != nil { state.warned = false }
            let lost = state.current == nil && !state.warned
            if lost { state.warned = true }
            return (found, lost)
        }
        if let found {
            logger.notice("PostgreSQL primary found", metadata: ["host": "\(hosts[found])"])
        } else if lost {
            logger.warning(
                "no writable PostgreSQL primary; sends are answered 503 until one is found",
                metadata: ["hosts": "\(hosts.map(\.description))"])
        }
    }
}
