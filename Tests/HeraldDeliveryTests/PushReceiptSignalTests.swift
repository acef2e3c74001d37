import Testing

@testable import HeraldDelivery

/// A waiting read of a receipt subscription is woken by the receipt, not by polling. The
/// waits are long (five minutes) and a woken one must end well before: the suites run beside
/// each other on two cores, where a task has waited 40 s for a thread at the suite's start.
@Suite struct PushReceiptSignalTests {
    @Test func aWaitingReadIsWokenWhenItsExpectedMessageIsAcknowledged() async {
        let signal = PushReceiptSignal()
        signal.expect(persistentID: "m1", subscription: "s1")
        let started = ContinuousClock.now
        let mark = signal.mark()
        async let waited: Void = signal.wait(for: "s1", after: mark, upTo: .seconds(300))
        try? await Task.sleep(for: .milliseconds(100))
        signal.acknowledged(["other", "m1"])
        await waited
        #expect(ContinuousClock.now - started < .seconds(120))
    }

    @Test func anotherSubscriptionsReceiptDoesNotWakeItAndTheWaitEndsOnTime() async {
        let signal = PushReceiptSignal()
        signal.expect(persistentID: "m2", subscription: "s2")
        let started = ContinuousClock.now
        let mark = signal.mark()
        async let waited: Void = signal.wait(for: "s1", after: mark, upTo: .milliseconds(300))
        try? await Task.sleep(for: .milliseconds(50))
        signal.acknowledged(["m2"])
        await waited
        #expect(ContinuousClock.now - started >= .milliseconds(300))
    }

    /// A wait whose time is up before it begins ends without waiting for an announcement,
    /// and leaves nothing behind.
    @Test(.timeLimit(.minutes(3))) func aWaitShorterThanItsStartEndsAtOnce() async {
        let signal = PushReceiptSignal()
        let started = ContinuousClock.now
        for _ in 0..<200 { await signal.wait(for: "s", after: signal.mark(), upTo: .zero) }
        #expect(ContinuousClock.now - started < .seconds(120))
        #expect(signal.readsHeld == 0)
    }

    /// A receipt announced after the reader looked at the store but before it began to
    /// wait ends the wait at once: the wake-up is not lost.
    @Test func aReceiptAnnouncedBetweenTheReadAndTheWaitIsNotMissed() async {
        let signal = PushReceiptSignal()
        let mark = signal.mark()
        signal.expect(persistentID: "m1", subscription: "s1")
        signal.acknowledged(["m1"])
        let started = ContinuousClock.now
        await signal.wait(for: "s1", after: mark, upTo: .seconds(300))
        #expect(ContinuousClock.now - started < .seconds(120))
        // A later read, marked after it, waits for the next one.
        let later = ContinuousClock.now
        await signal.wait(for: "s1", after: signal.mark(), upTo: .milliseconds(200))
        #expect(ContinuousClock.now - later >= .milliseconds(200))
    }
}
