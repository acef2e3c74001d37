import Synchronization

/// The node's `EventStreamAllowance`, shared by its listeners; a stream's slot is given
/// back once, whether its connection closed or its body ended first.
public final class EventStreamSlots: Sendable {
    private let allowance: Mutex<EventStreamAllowance>

    init(limits: EventStreamAllowance.Limits = .init()) {
        allowance = Mutex(EventStreamAllowance(limits: limits))
    }

    public convenience init() { self.init(limits: .init()) }

    /// A slot for `holder`, or why there is none.
    func take(for holder: EventStreamAllowance.Holder) -> Result<Slot, EventStreamAllowance.Refusal> {
        if let refusal = allowance.withLock({ $0.enter(holder) }) { return .failure(refusal) }
        return .success(Slot(holder: holder, slots: self))
    }

    /// Streams open now.
    var open: Int { allowance.withLock { $0.open } }

    fileprivate func give(back holder: EventStreamAllowance.Holder) {
        allowance.withLock { $0.leave(holder) }
    }

    /// One open stream's place, given back by the first `release()`.
    final class Slot: Sendable {
        let holder: EventStreamAllowance.Holder
        private let slots: EventStreamSlots
        private let released = Atomic(false)

        fileprivate init(holder: EventStreamAllowance.Holder, slots: EventStreamSlots) {
            self.holder = holder
            self.slots = slots
        }

        func release() {
            if !released.exchange(true, ordering: .acquiringAndReleasing) { slots.give(back: holder) }
        }
    }
}
