import Foundation
import GRDB
import HeraldCore
import HeraldStorage
import HeraldTelemetry
import HeraldTestSupport
import Logging
import Testing

@testable import HeraldGateway

/// A receipt (an impression or an open, SEMANTICS L7) that cannot be counted is counted as
/// refused by its reason: a store that fails is not the device's fault, and is not counted as
/// a receipt from a device the message was not addressed to.
@Suite struct ReceiptRecorderTests {
    let counted = CountedMetrics()

    func refused(_ reason: String) -> Int {
        counted.count(#"herald_receipts_refused_total{reason="\#(reason)"}"#)
    }

    @Test func aReceiptTheStoreFailsIsAStoreErrorNotAReceiptFromAnotherDevice() async throws {
        let path = createdTemporaryDirectory() + "/herald.sqlite"
        let store = try SQLiteStore(path: path)
        let recorder = ReceiptRecorder(
            store: store, metrics: counted.metrics,
            projects: { _ in nil }, logger: Logger(label: "test"))

        // A message the store does not have: not addressed to the device.
        await recorder.record(.impressions, messageID: "0:1#unknown", androidID: 1)
        #expect(refused("not-addressed") == 1)
        #expect(refused("store-error") == 0)

        try await DatabaseQueue(path: path).write { try $0.execute(sql: "DROP TABLE messages") }
        await recorder.record(.impressions, messageID: "0:1#unknown", androidID: 1)
        #expect(refused("not-addressed") == 1)
        #expect(refused("store-error") == 1)
    }
}
