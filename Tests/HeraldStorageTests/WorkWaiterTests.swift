import HeraldStorage
import Testing

/// How a background worker waits: a signal ends the wait, at most once a pace; a due time it
/// knows ends it unwoken; a store that gives no signal is looked at every `polling`. The
/// fallbacks are long, and no wait is bounded more tightly than by them: the whole suite on
/// two cores can hold the test process's threads for many seconds.
@Suite struct WorkWaiterTests {
    func elapsed(_ body: () async -> Bool) async -> (Bool, Duration) {
        let start = ContinuousClock.now
        let woken = await body()
        return (woken, ContinuousClock.now - start)
    }

    @Test func aWriteEndsTheWaitButLooksStayAPaceApart() async {
        let signals = WorkSignals()
        var waiter = WorkWaiter(
            .events, of: signals, fallback: .seconds(120), pace: .milliseconds(300), polling: .seconds(120))
        let mark = waiter.mark()
        signals.wake([.events])
        let (woken, waited) = await elapsed { await waiter.wait(after: mark) }
        #expect(woken)
        #expect(waited >= .milliseconds(250), "\(waited)")
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
        var waiter = WorkWaiter(.scheduled, of: WorkSignals(), fallback: .seconds(120), polling: .seconds(120))
        let mark = waiter.mark()
        let (woken, waited) = await elapsed { await waiter.wait(after: mark, dueIn: .milliseconds(100)) }
        #expect(!woken)
        #expect(waited >= .milliseconds(90) && waited < .seconds(120), "\(waited)")
    }

    @Test func aStoreWithoutSignalsIsLookedAtEveryPoll() async {
        var waiter = WorkWaiter(.events, of: nil, polling: .milliseconds(100))
        let mark = waiter.mark()
        let (woken, waited) = await elapsed { await waiter.wait(after: mark) }
        #expect(!woken)
        #expect(waited >= .milliseconds(90), "\(waited)")
    }
}
