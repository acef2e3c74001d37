import Testing

@testable import HeraldStorage

/// How a store given several hosts chooses its primary (`PostgresPrimary.State`).
@Suite struct PostgresPrimaryTests {
    typealias State = PostgresPrimary.State
    let start = ContinuousClock.now

    func answered(_ state: inout State, _ host: Int, _ writable: Bool, after seconds: Double) {
        state.answers[host] = .init(writable: writable, at: start + .seconds(seconds))
    }

    @Test func theFirstHostAnsweringWritableIsThePrimaryAndStaysWhileItSaysSo() {
        var state = State(current: nil)
        answered(&state, 0, false, after: 0)
        answered(&state, 1, true, after: 0)
        #expect(state.decide(now: start + .seconds(0.1), hosts: 2) == 1)
        #expect(state.current == 1)
        answered(&state, 1, true, after: 1)
        #expect(state.decide(now: start + .seconds(1.1), hosts: 2) == nil)
        #expect(state.current == 1)
    }

    @Test func aPrimaryThatTurnsReadOnlyOrStopsAnsweringIsDroppedForTheOneThatTakesWrites() {
        var state = State(current: 0)
        answered(&state, 0, true, after: 0)
        answered(&state, 1, false, after: 0)
        // Its answers grew old (its questions hang): no primary.
        #expect(state.decide(now: start + PostgresPrimary.answerLifetime, hosts: 2) == nil)
        #expect(state.current == nil)
        // The standby was promoted.
        answered(&state, 1, true, after: 4)
        #expect(state.decide(now: start + .seconds(4), hosts: 2) == 1)
        // And demoted again.
        answered(&state, 1, false, after: 5)
        #expect(state.decide(now: start + .seconds(5), hosts: 2) == nil)
        #expect(state.current == nil)
    }

    @Test func aSuspectedHostIsChosenAgainOnlyOnAnAnswerGivenAfterTheSuspicion() {
        var state = State(current: 0)
        answered(&state, 0, true, after: 0)
        state.current = nil
        state.suspectedAt[0] = start + .seconds(0.5)
        #expect(state.decide(now: start + .seconds(0.6), hosts: 1) == nil)
        answered(&state, 0, true, after: 1)
        #expect(state.decide(now: start + .seconds(1), hosts: 1) == 0)
    }
}
