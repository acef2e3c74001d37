import Testing

@testable import HeraldGateway

/// A session's answers to the frames of one socket read go out in one flush when the read
/// completes; what it writes outside a read goes out when the work under way ends.
@Suite struct SessionFlushTests {
    typealias Flush = DeviceGateway.SessionHandler.Flush

    @Test func aReadsAnswersWaitForItsEnd() {
        var flush = Flush.flushed.reading().written().written()
        #expect(flush == .atReadComplete(written: true))
        #expect(flush.holdsWrites)
        flush = flush.readCompleted()
        #expect(flush == .due)
    }

    @Test func aReadThatWroteNothingLeavesNothingDue() {
        #expect(Flush.flushed.reading().readCompleted() == .flushed)
        #expect(!Flush.flushed.reading().holdsWrites)
    }

    @Test func writesOutsideAReadAreDueAtOnceAndAReadTakesThemOver() {
        #expect(Flush.flushed.written() == .due)
        #expect(Flush.due.reading() == .atReadComplete(written: true))
        #expect(Flush.due.readCompleted() == .due)
    }
}
