import Testing

@testable import HeraldHTTP

/// SEMANTICS E4: the node's event streams are shared fairly: per credential, per project,
/// then the node.
@Suite struct EventStreamAllowanceTests {
    let limits = EventStreamAllowance.Limits(node: 5, project: 3, credential: 2)

    @Test func E4_aCredentialAndAProjectEachHoldOnlyTheirShare() {
        var allowance = EventStreamAllowance(limits: limits)
        let first = EventStreamAllowance.Holder(projectID: "a", keyID: "k1")
        let second = EventStreamAllowance.Holder(projectID: "a", keyID: "k2")
        #expect(allowance.enter(first) == nil)
        #expect(allowance.enter(first) == nil)
        #expect(allowance.enter(first) == .credential)
        #expect(allowance.enter(second) == nil)
        #expect(allowance.enter(second) == .project)
        // Another project still opens streams, up to the node's.
        let other = EventStreamAllowance.Holder(projectID: "b", keyID: "k3")
        #expect(allowance.enter(other) == nil)
        #expect(allowance.enter(other) == nil)
        #expect(allowance.enter(EventStreamAllowance.Holder(projectID: "c", keyID: "k4")) == .node)
        #expect(allowance.open == 5)
    }

    func refusal(_ taken: Result<EventStreamSlots.Slot, EventStreamAllowance.Refusal>) -> EventStreamAllowance.Refusal?
    {
        if case .failure(let refusal) = taken { return refusal }
        return nil
    }

    @Test func E4_aClosedStreamGivesItsPlaceBackOnce() {
        let slots = EventStreamSlots(limits: limits)
        let holder = EventStreamAllowance.Holder(projectID: "a", keyID: "k1")
        let taken = [slots.take(for: holder), slots.take(for: holder)]
        #expect(refusal(slots.take(for: holder)) == .credential)
        guard case .success(let slot) = taken[0] else { return #expect(Bool(false)) }
        // The connection's close and the body's end both release it: counted once.
        slot.release()
        slot.release()
        #expect(slots.open == 1)
        #expect(refusal(slots.take(for: holder)) == nil)
        #expect(refusal(slots.take(for: holder)) == .credential)
    }
}
