import HeraldCore
import Testing

@testable import HeraldDelivery

/// The ledger alone, with the times its events happen at: who a producer waits for, when
/// its wait ends, and which acknowledgements are held until their rows exist (SEMANTICS
/// L2, L4, L7). No clock is read and nothing sleeps.
@Suite struct OfferLedgerTests {
    let settle = DeliveryPath.Settle(quiet: .milliseconds(1), limit: .milliseconds(3))

    func key(_ id: String, device: UInt64 = 7) -> OfferLedger.Key {
        OfferLedger.Key(androidID: device, persistentID: id)
    }

    func at(_ microseconds: Int64) -> Duration { .microseconds(microseconds) }

    /// A ledger with one page waiting from time 0 for offers of `ids`.
    func waiting(for ids: [String]) -> (ledger: OfferLedger, page: UInt64, alarm: [OfferLedger.Action]) {
        var ledger = OfferLedger()
        let page = ledger.openPage(settle, now: at(0))
        for id in ids { ledger.offer(key(id), page: page) }
        let alarm = ledger.wait(page: page, now: at(0))
        return (ledger, page, alarm)
    }

    @Test func L7_aPageIsReleasedByItsLastAnswerAndNotBefore() {
        var (ledger, page, alarm) = waiting(for: ["a", "b"])
        #expect(alarm == [.setAlarm(page: page, at: at(1000))])
        ledger.taken(key("a"), now: at(20))
        // One acknowledgement of two: the page still waits, and the row waits for its write.
        let afterFirst = ledger.acknowledged(androidID: 7, ["a"], now: at(30))
        let afterSecond = ledger.declined(key("b"), now: at(40))
        #expect(afterFirst.isEmpty && afterSecond == [.release(page: page)])
        // Only the acknowledged offer without a row needs none.
        let settled = ledger.closePage(page, keys: [key("a"), key("b")])
        let declinedWasAcknowledged = ledger.written(key("b"))
        #expect(settled == [true, false] && !declinedWasAcknowledged)
        #expect(ledger.openCount == (0, 0))
    }

    @Test func L7_anAlarmEndsAQuietPageAndMovesWhenNewsCameMeanwhile() {
        var (ledger, page, _) = waiting(for: ["a", "b"])
        // News at 600 µs: the alarm at 1 ms is moved to 1.6 ms, not rung again and again.
        ledger.taken(key("a"), now: at(600))
        let moved = ledger.alarmRang(page: page, now: at(1000))
        let rung = ledger.alarmRang(page: page, now: at(1600))
        #expect(moved == [.setAlarm(page: page, at: at(1600))] && rung == [.release(page: page)])
        // An answer after the release changes nothing for the page.
        let late = ledger.acknowledged(androidID: 7, ["a"], now: at(1700))
        let settled = ledger.closePage(page, keys: [key("a"), nil])
        #expect(late.isEmpty && settled == [true, false])
    }

    @Test func L7_aPageNeverWaitsPastItsLimitHoweverBusyItsDevicesAre() {
        var (ledger, page, _) = waiting(for: ["a", "b", "c", "d"])
        var alarms: [OfferLedger.Action] = []
        for (id, news) in [("a", 900), ("b", 1800), ("c", 2700)] {
            ledger.taken(key(id), now: at(Int64(news)))
            alarms += ledger.alarmRang(page: page, now: at(Int64(news + 100)))
        }
        alarms += ledger.alarmRang(page: page, now: at(3000))
        #expect(
            alarms == [
                .setAlarm(page: page, at: at(1900)), .setAlarm(page: page, at: at(2800)),
                .setAlarm(page: page, at: at(3000)), .release(page: page),
            ])
    }

    @Test func L7_aPageWhoseOffersWereAllAnsweredBeforeItsWaitIsReleasedAtOnce() {
        var ledger = OfferLedger()
        let page = ledger.openPage(settle, now: at(0))
        ledger.offer(key("a"), page: page)
        ledger.taken(key("a"), now: at(5))
        let answered = ledger.acknowledged(androidID: 7, ["a"], now: at(8))
        let wait = ledger.wait(page: page, now: at(9))
        #expect(answered == [.release(page: page)] && wait == [.release(page: page)])
        // A refused offer answers its page too.
        let other = ledger.openPage(settle, now: at(10))
        ledger.offer(key("b"), page: other)
        let refused = ledger.refused(key("b"))
        #expect(refused == [.release(page: other)])
    }

    @Test func L4_acknowledgementsOfRowsNotYetWrittenAreHeldUntilTheWrite() {
        var ledger = OfferLedger()
        ledger.offer(key("a"), page: nil)
        ledger.taken(key("a"), now: at(0))
        // Another device's acknowledgement of the same id is its own: written at once.
        let otherDevice = ledger.acknowledged(androidID: 8, ["a"], now: at(1))
        let sameDevice = ledger.acknowledged(androidID: 7, ["a", "b"], now: at(2))
        #expect(otherDevice == [.writeAcknowledgements(androidID: 8, ["a"])])
        #expect(sameDevice == [.writeAcknowledgements(androidID: 7, ["b"])])
        let heldUntilWritten = ledger.written(key("a"))
        #expect(heldUntilWritten && ledger.openCount == (0, 0))
        // An offer not sent yet holds nothing back.
        ledger.offer(key("c"), page: nil)
        let notSent = ledger.acknowledged(androidID: 7, ["c"], now: at(3))
        ledger.withdraw(key("c"))
        #expect(notSent == [.writeAcknowledgements(androidID: 7, ["c"])] && ledger.openCount == (0, 0))
    }

    @Test func L7_aDeclinedOfferAnswersItsPageOnceAndIsReadFromTheQueueLater() {
        var (ledger, page, _) = waiting(for: ["a", "b"])
        let declined = ledger.declined(key("a"), now: at(10))
        let declinedAgain = ledger.declined(key("a"), now: at(20))
        // Its acknowledgement (of the row read later) is written at once; the page still waits for "b".
        let acknowledged = ledger.acknowledged(androidID: 7, ["a"], now: at(40))
        #expect(declined.isEmpty && declinedAgain.isEmpty)
        #expect(acknowledged == [.writeAcknowledgements(androidID: 7, ["a"])])
        let released = ledger.refused(key("b"))
        #expect(released == [.release(page: page)])
    }

    @Test func L4_aRepeatedAcknowledgementAfterTheWriteIsWrittenAsAnyOther() {
        var ledger = OfferLedger()
        ledger.offer(key("a"), page: nil)
        ledger.taken(key("a"), now: at(0))
        _ = ledger.acknowledged(androidID: 7, ["a"], now: at(1))
        let rowMustGo = ledger.written(key("a"))
        let again = ledger.acknowledged(androidID: 7, ["a"], now: at(2))
        let writtenAgain = ledger.written(key("a"))
        #expect(rowMustGo && again == [.writeAcknowledgements(androidID: 7, ["a"])] && !writtenAgain)
    }
}
