import HeraldCore
import Testing

@testable import HeraldDelivery

/// The "offered while stored" order as a value (SEMANTICS L2, L4), event by event.
struct OfferLedgerTests {
    let key = OfferLedger.Key(androidID: 7, persistentID: "a")

    @Test func L4_anAcknowledgementBeforeTheRowIsHeldAndTheWriteLearnsOfIt() {
        var ledger = OfferLedger()
        ledger.offer(key, settlement: nil)
        _ = ledger.sent(key)
        let (ready, answered) = ledger.acknowledged(androidID: 7, ["a", "b"])
        #expect(ready == ["b"])
        #expect(answered.isEmpty)
        let rowMustGo = ledger.written(key)
        #expect(rowMustGo)
        // Finished: a repeated acknowledgement is written as any other.
        let again = ledger.acknowledged(androidID: 7, ["a"])
        #expect(again.ready == ["a"])
        let writtenAgain = ledger.written(key)
        #expect(!writtenAgain)
    }

    @Test func L4_anOfferNotYetSentIsNotHeldBack() {
        var ledger = OfferLedger()
        ledger.offer(key, settlement: nil)
        let acknowledged = ledger.acknowledged(androidID: 7, ["a"])
        #expect(acknowledged.ready == ["a"])
        let rowMustGo = ledger.written(key)
        #expect(!rowMustGo)
    }

    @Test func L4_anotherDevicesAcknowledgementTouchesNothingOfThisOnes() {
        var ledger = OfferLedger()
        ledger.offer(key, settlement: nil)
        _ = ledger.sent(key)
        let other = ledger.acknowledged(androidID: 8, ["a"])
        #expect(other.ready == ["a"])
        let taken = ledger.takeAcknowledged(key)
        #expect(!taken)
    }

    @Test func L7_thePagesSettlementIsAnsweredByTheAcknowledgementOrTheDecline() {
        var ledger = OfferLedger()
        let page = Settlement()
        page.add()
        ledger.offer(key, settlement: page)
        let sent = ledger.sent(key)
        #expect(sent === page)
        let (_, answered) = ledger.acknowledged(androidID: 7, ["a"])
        #expect(answered.count == 1 && answered[0] === page)
        // Acknowledged while the page waited: no row, and the offer is finished.
        let taken = ledger.takeAcknowledged(key)
        #expect(taken)
        let written = ledger.written(key)
        #expect(!written)

        let declinedKey = OfferLedger.Key(androidID: 7, persistentID: "b")
        ledger.offer(declinedKey, settlement: page)
        let declined = ledger.declined(declinedKey)
        #expect(declined === page)
        // Declined once: the page is not answered twice.
        let declinedAgain = ledger.declined(declinedKey)
        #expect(declinedAgain == nil)
        let sentAfterDecline = ledger.sent(declinedKey)
        #expect(sentAfterDecline == nil)
    }

    @Test func aWithdrawnOfferIsForgotten() {
        var ledger = OfferLedger()
        ledger.offer(key, settlement: nil)
        _ = ledger.sent(key)
        ledger.withdraw(key)
        let acknowledged = ledger.acknowledged(androidID: 7, ["a"])
        #expect(acknowledged.ready == ["a"])
    }
}
