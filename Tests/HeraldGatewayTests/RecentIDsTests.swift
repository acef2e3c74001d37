import Testing

@testable import HeraldGateway

/// The acknowledged ids a session remembers, so that a queue read racing an acknowledgement's
/// deletion does not send a message again.
@Suite struct RecentIDsTests {
    @Test func theNewestIdsAreRememberedAndTheOldestForgotten() {
        var recent = RecentIDs(capacity: 3)
        #expect(!recent.contains("0:1"))
        recent.append(contentsOf: ["0:1", "0:2"])
        #expect(recent.contains("0:1") && recent.contains("0:2"))
        recent.append(contentsOf: ["0:3", "0:4"])
        #expect(!recent.contains("0:1"))
        #expect(recent.contains("0:2") && recent.contains("0:3") && recent.contains("0:4"))
        #expect(!recent.contains("0:5") && !recent.contains(""))
    }
}
