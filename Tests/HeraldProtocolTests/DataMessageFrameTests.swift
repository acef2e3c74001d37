import HeraldProtocol
import SwiftProtobuf
import Testing

/// A data message frame built from stored stanza bytes with the delivery's fields appended.
@Suite struct DataMessageFrameTests {
    func storedStanza() throws -> [UInt8] {
        var stanza = McsProto_DataMessageStanza()
        stanza.from = "1234"
        stanza.category = "com.example"
        stanza.persistentID = "stale-id"
        var entry = McsProto_AppData()
        entry.key = "k"
        entry.value = "v"
        stanza.appData = [entry]
        return try stanza.serializedBytes()
    }

    @Test(arguments: [Int32(0), 7, 300, Int32.max, -1])
    func L4_theAppendedFieldsReadAsIfTheStanzaHadBeenEncodedWithThem(lastStreamID: Int32) throws {
        let frame = MCSFrame.dataMessage(
            stored: try storedStanza(), persistentID: "0:1700000000000%abc", lastStreamIDReceived: lastStreamID)
        #expect(frame.tag == .dataMessageStanza)
        let read = try frame.decode(as: McsProto_DataMessageStanza.self)
        var expected = try McsProto_DataMessageStanza(serializedBytes: try storedStanza())
        expected.persistentID = "0:1700000000000%abc"
        expected.lastStreamIDReceived = lastStreamID
        #expect(read == expected)
    }

    @Test func D1_aDeletionSignalCarriesTotalDeletedAfterTheOtherAppData() throws {
        let frame = MCSFrame.dataMessage(
            stored: try storedStanza(), persistentID: "deleted:1", lastStreamIDReceived: 3, totalDeleted: 142)
        let read = try frame.decode(as: McsProto_DataMessageStanza.self)
        #expect(read.appData.map(\.key) == ["k", "total_deleted"])
        #expect(read.appData.last?.value == "142")
        #expect(read.persistentID == "deleted:1")
    }
}
