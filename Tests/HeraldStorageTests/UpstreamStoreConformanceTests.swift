import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

func upstreamMessage(_ id: String, token: String = "tok-a", at seconds: Int64 = 100, ttl: Int64 = 86_400)
    -> UpstreamMessage
{
    UpstreamMessage(
        projectID: "alpha-project", kind: .message, messageID: id, token: token, category: "com.example.app",
        androidID: 42, data: [(key: "k", value: "v \(id)")], createdAt: Timestamp(seconds: seconds),
        expiresAt: Timestamp(seconds: seconds + ttl))
}

/// Conformance for what waits for app servers: upstream messages and delivery receipts.
@Suite struct UpstreamStoreConformanceTests {
    func prepared(_ backend: Backend) async throws -> any HeraldStore {
        try await storeWithDevice(backend)
    }

    @Test(arguments: Backend.allCases)
    func aMessageSentAgainByItsDeviceIsKeptOnce(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        #expect(try await store.appendUpstream([upstreamMessage("m1"), upstreamMessage("m2")]) == 2)
        #expect(try await store.appendUpstream([upstreamMessage("m1"), upstreamMessage("m1", token: "tok-b")]) == 1)
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 3)
        #expect(try await store.upstreamWaiting(projectID: "alpha-project", androidID: 42) == (3, 3))
        #expect(try await store.upstreamWaiting(projectID: "alpha-project", androidID: 7) == (3, 0))
        let leased = try await store.leaseUpstream(
            projectID: "alpha-project", holder: "n/a", now: Timestamp(seconds: 200), until: Timestamp(seconds: 230),
            limit: 10)
        #expect(leased.map(\.messageID) == ["m1", "m2", "m1"])
        #expect(leased[0].data.map(\.value) == ["v m1"] && leased[0].category == "com.example.app")
        // What waits goes down as messages are acknowledged or expire.
        #expect(try await store.acknowledgeUpstream(projectID: "alpha-project", messageID: "m2", token: nil))
        #expect(try await store.upstreamWaiting(projectID: "alpha-project", androidID: 42) == (2, 2))
        let expired = try await store.deleteExpiredUpstream(now: Timestamp(seconds: 1_000_000), limit: 10)
        #expect(expired.count == 2)
        #expect(try await store.upstreamWaiting(projectID: "alpha-project", androidID: 42) == (0, 0))
        try await store.appendUpstream([upstreamMessage("m3")])
        #expect(try await store.upstreamWaiting(projectID: "alpha-project", androidID: 42) == (1, 1))
    }

    @Test(arguments: Backend.allCases)
    func aLeasedMessageGoesToNoOtherConnectionUntilItsLeaseEndsOrIsReleased(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendUpstream((1...3).map { upstreamMessage("m\($0)") })
        let now = Timestamp(seconds: 200)
        let first = try await store.leaseUpstream(
            projectID: "alpha-project", holder: "node-1/a", now: now, until: now.adding(seconds: 30), limit: 2)
        #expect(first.map(\.messageID) == ["m1", "m2"])
        let second = try await store.leaseUpstream(
            projectID: "alpha-project", holder: "node-1/b", now: now, until: now.adding(seconds: 30), limit: 5)
        #expect(second.map(\.messageID) == ["m3"])
        #expect(
            try await store.leaseUpstream(
                projectID: "beta-project", holder: "x", now: now, until: now.adding(seconds: 30), limit: 5
            ).isEmpty)
        // Unacknowledged when the lease ends: sendable again.
        let later = now.adding(seconds: 31)
        let again = try await store.leaseUpstream(
            projectID: "alpha-project", holder: "node-2/c", now: later, until: later.adding(seconds: 30), limit: 5)
        #expect(again.map(\.messageID) == ["m1", "m2", "m3"])
        // A node that restarts ends its connections' leases at once; another node's stay.
        try await store.releaseUpstream(holderPrefix: "node-1/")
        #expect(
            try await store.leaseUpstream(
                projectID: "alpha-project", holder: "node-1/d", now: later, until: later.adding(seconds: 30), limit: 5
            ).isEmpty)
        try await store.releaseUpstream(holderPrefix: "node-2/")
        #expect(
            try await store.leaseUpstream(
                projectID: "alpha-project", holder: "node-1/d", now: later, until: later.adding(seconds: 30), limit: 5
            ).count == 3)
    }

    @Test(arguments: Backend.allCases)
    func anAcknowledgedMessageIsDeletedOnceAndOnlyForItsDevice(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendUpstream([upstreamMessage("m1", token: "tok-a"), upstreamMessage("m1", token: "tok-b")])
        #expect(try await store.acknowledgeUpstream(projectID: "alpha-project", messageID: "m1", token: "tok-b"))
        #expect(
            try await store.acknowledgeUpstream(projectID: "alpha-project", messageID: "m1", token: "tok-b") == false)
        #expect(try await store.acknowledgeUpstream(projectID: "beta-project", messageID: "m1", token: nil) == false)
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 1)
        #expect(try await store.acknowledgeUpstream(projectID: "alpha-project", messageID: "m1", token: nil))
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 0)
    }

    @Test(arguments: Backend.allCases)
    func expiredMessagesAreDeletedAndAnsweredNeverLeased(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendUpstream([upstreamMessage("short", ttl: 10), upstreamMessage("long")])
        let now = Timestamp(seconds: 111)
        let leased = try await store.leaseUpstream(
            projectID: "alpha-project", holder: "h", now: now, until: now.adding(seconds: 30), limit: 5)
        #expect(leased.map(\.messageID) == ["long"])
        let expired = try await store.deleteExpiredUpstream(now: now, limit: 10)
        #expect(expired.map(\.messageID) == ["short"] && expired[0].androidID == 42 && expired[0].token == "tok-a")
        #expect(try await store.deleteExpiredUpstream(now: now, limit: 10).isEmpty)
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 1)
    }

    /// XMPP delivery receipts: acknowledging a queue entry of a message sent with a receipt
    /// requested keeps the receipt in the same transaction; other entries leave none.
    @Test(arguments: Backend.allCases)
    func acknowledgingAnEntryThatWantsAReceiptKeepsItsReceipt(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        var wanted = queued("p1")
        wanted.receiptID = "app-server-7"
        wanted.appID = "com.example.app"
        try await store.appendMessages([], queue: [wanted, queued("p2")])
        #expect(try await store.acknowledge(androidID: 42, persistentIDs: ["p1", "p2"]) == 2)
        let now = SystemClock().now()
        let receipts = try await store.leaseUpstream(
            projectID: "alpha-project", holder: "h", now: now, until: now.adding(seconds: 30), limit: 5)
        #expect(receipts.count == 1)
        let receipt = try #require(receipts.first)
        #expect(receipt.kind == .receipt && receipt.messageID == "dr2:app-server-7" && receipt.token == "tok")
        #expect(receipt.category == "com.example.app" && receipt.androidID == 42)
        #expect(abs(receipt.createdAt.milliseconds - now.milliseconds) < 60_000)
        #expect(receipt.appServerJSON["data"]?["original_message_id"]?.stringValue == "app-server-7")
        // Acknowledged again (a duplicate acknowledgement): no second receipt.
        #expect(try await store.acknowledge(androidID: 42, persistentIDs: ["p1"]) == 0)
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 1)
        // The app server acknowledges a receipt by its id, whatever its `to` says.
        #expect(
            try await store.acknowledgeUpstream(
                projectID: "alpha-project", messageID: "dr2:app-server-7", token: "gcm.googleapis.com"))
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 0)
    }

    /// Web Push receipts (RFC 8030 §5.1): acknowledging a push message's queue entry (an
    /// entry of no project) that names a receipt subscription keeps a push receipt, which
    /// its sender reads until it says it has read it.
    @Test(arguments: Backend.allCases)
    func acknowledgingAPushMessageKeepsItsReceiptUntilItsSenderHasReadIt(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        var pushed = queued("w1")
        pushed.projectID = ""
        pushed.receiptID = "receipts-subscription-1"
        var other = queued("w2")
        other.projectID = ""
        try await store.appendMessages([], queue: [pushed, other])
        #expect(try await store.acknowledge(androidID: 42, persistentIDs: ["w1", "w2"]) == 2)
        // No XMPP receipt for a message of no project.
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 0)
        let now = SystemClock().now()
        try await store.appendPushReceipts([
            PushReceipt(subscription: "receipts-subscription-1", token: "tok", messageID: "w3", acknowledgedAt: now),
            PushReceipt(subscription: "receipts-subscription-2", token: "tok", messageID: "w4", acknowledgedAt: now),
        ])
        // Kept once, whatever repeats it.
        try await store.appendPushReceipts([
            PushReceipt(subscription: "receipts-subscription-1", token: "tok", messageID: "w3", acknowledgedAt: now)
        ])
        let first = try await store.pushReceipts(
            subscription: "receipts-subscription-1", acknowledgedThrough: 0, limit: 10)
        #expect(first.map(\.messageID) == ["w1", "w3"] && first.allSatisfy { $0.token == "tok" })
        #expect(abs(first[0].acknowledgedAt.milliseconds - now.milliseconds) < 60_000)
        #expect(first[0].expiresAt == first[0].acknowledgedAt.adding(seconds: PushReceipt.lifetimeSeconds))
        // Read again until the sender says how far it has read.
        #expect(
            try await store.pushReceipts(subscription: "receipts-subscription-1", acknowledgedThrough: 0, limit: 1)
                .map(\.messageID) == ["w1"])
        let rest = try await store.pushReceipts(
            subscription: "receipts-subscription-1", acknowledgedThrough: first[0].sequence, limit: 10)
        #expect(rest.map(\.messageID) == ["w3"])
        #expect(
            try await store.pushReceipts(
                subscription: "receipts-subscription-1", acknowledgedThrough: rest[0].sequence, limit: 10
            ).isEmpty)
        // Another subscription's receipts are its own, and expire after four weeks.
        #expect(
            try await store.pushReceipts(subscription: "receipts-subscription-2", acknowledgedThrough: 0, limit: 10)
                .count == 1)
        #expect(try await store.deleteExpiredPushReceipts(now: now, limit: 10) == 0)
        #expect(
            try await store.deleteExpiredPushReceipts(now: now.adding(seconds: PushReceipt.lifetimeSeconds), limit: 10)
                == 1)
        #expect(
            try await store.pushReceipts(subscription: "receipts-subscription-2", acknowledgedThrough: 0, limit: 10)
                .isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func aProjectsDeletionTakesItsUpstreamMessages(_ backend: Backend) async throws {
        let store = try await prepared(backend)
        try await store.appendUpstream([upstreamMessage("m1")])
        #expect(try await store.deleteProject(id: "alpha-project"))
        #expect(try await store.upstreamCount(projectID: "alpha-project") == 0)
    }
}
