import HeraldStorage
import Testing

/// How a background worker waits: a signal ends the wait, at most once a pace; a due time it
/// knows ends it unwoken; a store that gives no signal is looked at every `polling`.
@Suite struct WorkWaiterTests {
    func elapsed(_ body: () async -> Bool) async -> (Bool, Duration) {
        let start = ContinuousClock.now
        let woken = await body()
        return (woken, ContinuousClock.now - start)
    }

    @Test func aWriteEndsTheWaitButLooksStayAPaceApart() async {
        let signals = WorkSignals()
        var waiter = WorkWaiter(
            .events, of: signals, fallback: .seconds(30), pace: .milliseconds(300), polling: .seconds(30))
        let mark = waiter.mark()
        signals.wake([.events])
        let (woken, waited) = await elapsed { await waiter.wait(after: mark) }
        #expect(woken)
        #expect(waited >= .milliseconds(250) && waited < .seconds(5), "\(waited)")
    }

    @Test func anotherKindOfWorkDoesNotWakeIt() async {
        let signals = WorkSignals()
        var waiter = WorkWaiter(.events, of: signals, fallback: .milliseconds(300), polling: .seconds(30))
        let mark = waiter.mark()
        signals.wake([.scheduled, .handOffs, .credentials])
        let (woken, waited) = await elapsed { await waiter.wait(after: mark) }
        #expect(!woken)
        #expect(waited >= .milliseconds(250), "\(waited)")
    }

    @Test func aDueTimeEndsTheWaitBeforeTheFallback() async {
        var waiter = WorkWaiter(.scheduled, of: WorkSignals(), fallback: .seconds(30), polling: .seconds(30))
        let mark = waiter.mark()
        let (woken, waited) = await elapsed { await waiter.wait(after: mark, dueIn: .milliseconds(100)) }
        #expect(!woken)
        #expect(waited >= .milliseconds(90) && waited < .seconds(5), "\(waited)")
    }

    @Test func aStoreWithoutSignalsIsLookedAtEveryPoll() async {
        var waiter = WorkWaiter(.events, of: nil, polling: .milliseconds(100))
        let mark = waiter.mark()
        let (woken, waited) = await elapsed { await waiter.wait(after: mark) }
        #expect(!woken)
        #expect(waited >= .milliseconds(90) && waited < .seconds(5), "\(waited)")
    }
}
