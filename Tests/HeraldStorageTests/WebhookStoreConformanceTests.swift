import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Testing

/// Conformance for webhooks (SEMANTICS E5): claims under a lease, progress written only by
/// the holder, paused ones never claimed, and the pure retry schedule.
@Suite struct WebhookStoreConformanceTests {
    let start = Timestamp(seconds: 10_000)

    /// Writes `count` events of the sample project (the accepted events of topic messages).
    func events(_ count: Int, _ store: any HeraldStore) async throws {
        try await store.appendMessages((0..<count).map { sampleMessage("m-\($0)-\(SecureRandom.hex(bytes: 4))") })
    }

    @Test(arguments: Backend.allCases)
    func E5_aWebhookIsClaimedByOneHolderUntilItsLeaseRunsOutOrItIsReleased(_ backend: Backend) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        let webhook = Webhook.make(
            projectID: "alpha-project", url: "https://hooks.example/a", types: [.delivered], cursor: 0, at: start)
        try await store.addWebhook(webhook)
        // Nothing after its cursor: an idle webhook is not claimed.
        #expect(
            try await store.claimDueWebhooks(now: start, until: start.adding(seconds: 60), holder: "node-a", limit: 10)
                .isEmpty)
        try await events(3, store)
        #expect(try await store.webhooks(projectID: "alpha-project") == [webhook])
        #expect(webhook.id.hasPrefix("wh_") && webhook.secret.hasPrefix("whsec_") && webhook.secret.count > 40)
        let claimed = try await store.claimDueWebhooks(
            now: start, until: start.adding(seconds: 60), holder: "node-a", limit: 10)
        #expect(claimed == [webhook])
        // Held: another holder gets nothing until the lease runs out.
        #expect(
            try await store.claimDueWebhooks(now: start, until: start.adding(seconds: 60), holder: "node-b", limit: 10)
                .isEmpty)
        let moved = webhook.delivered(through: 1, at: start)
        #expect(try await store.saveWebhook(moved, holder: "node-b", release: false) == false)
        #expect(try await store.saveWebhook(moved, holder: "node-a", release: false))
        let taken = try await store.claimDueWebhooks(
            now: start.adding(seconds: 61), until: start.adding(seconds: 120), holder: "node-b", limit: 10)
        #expect(taken.map(\.cursor) == [1])
        // The first holder lost it: its progress is not written any more.
        #expect(
            try await store.saveWebhook(moved.delivered(through: 11, at: start), holder: "node-a", release: true)
                == false)
        // Released with a failure, it is due again at its next attempt.
        let failing = taken[0].failed("HTTP 500 for event 2", at: start.adding(seconds: 61))
        #expect(try await store.saveWebhook(failing, holder: "node-b", release: true))
        #expect(
            try await store.claimDueWebhooks(
                now: start.adding(seconds: 61), until: start.adding(seconds: 120), holder: "node-a", limit: 10
            ).isEmpty)
        let again = try await store.claimDueWebhooks(
            now: failing.nextAttemptAt, until: start.adding(seconds: 200), holder: "node-a", limit: 10)
        #expect(again.first?.lastErrors == ["HTTP 500 for event 2"] && again.first?.failures == 1)
        // Past its last event, it is idle again.
        #expect(try await store.saveWebhook(again[0].delivered(through: 3, at: start), holder: "node-a", release: true))
        let idle = start.adding(seconds: 300)
        #expect(try await store.claimDueWebhooks(now: idle, until: idle, holder: "node-b", limit: 10).isEmpty)
        #expect(try await store.removeWebhook(projectID: "beta-project", id: webhook.id) == false)
        #expect(try await store.removeWebhook(projectID: "alpha-project", id: webhook.id))
        #expect(try await store.webhooks(projectID: "alpha-project").isEmpty)
    }

    @Test(arguments: Backend.allCases)
    func E5_aPausedWebhookIsNotClaimedUntilResumedAndAHolderClaimsAgainWhatItHeldBeforeARestart(
        _ backend: Backend
    ) async throws {
        let store = try await backend.makeStore()
        try await store.createProject(sampleProject(), firstKey: sampleKey("k1"))
        var webhook = Webhook.make(
            projectID: "alpha-project", url: "https://hooks.example/b", types: [], cursor: 0, at: start)
        try await store.addWebhook(webhook)
        try await events(1, store)
        _ = try await store.claimDueWebhooks(now: start, until: start.adding(seconds: 60), holder: "node-a", limit: 1)
        // node-a restarts: what it held is its again at once, nobody else's before the lease ends.
        #expect(
            try await store.claimDueWebhooks(now: start, until: start.adding(seconds: 60), holder: "node-a", limit: 1)
                .count == 1)
        webhook.state = .paused
        #expect(try await store.saveWebhook(webhook, holder: "node-a", release: true))
        let later = start.adding(seconds: 3600)
        #expect(try await store.claimDueWebhooks(now: later, until: later, holder: "node-a", limit: 1).isEmpty)
        #expect(try await store.replaceWebhook(webhook.resumed(at: later)))
        let resumed = try await store.claimDueWebhooks(
            now: later, until: later.adding(seconds: 60), holder: "node-b", limit: 1)
        #expect(resumed.map(\.state) == [.active])
    }

    @Test func E5_aFailingEventIsRetriedWithADoublingWaitAndTheWebhookPausedAfterADay() {
        let start = start
        var webhook = Webhook.make(projectID: "p", url: "https://hooks.example", types: [], cursor: 3, at: start)
        var waits: [Int64] = []
        var now = start
        for n in 0..<14 {
            webhook = webhook.failed("error \(n)", at: now)
            waits.append((webhook.nextAttemptAt.milliseconds - now.milliseconds) / 1000)
            now = webhook.nextAttemptAt
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 3600, 3600])
        #expect(webhook.lastErrors == (9..<14).map { "error \($0)" } && webhook.failingSince == start)
        #expect(webhook.state == .active && webhook.cursor == 3)
        webhook = webhook.failed("still", at: start.adding(seconds: Webhook.retryWindowSeconds))
        #expect(webhook.state == .paused)
        let resumed = webhook.resumed(at: now)
        #expect(resumed.state == .active && resumed.failures == 0 && resumed.failingSince == nil && resumed.cursor == 3)
        let delivered = resumed.failed("once", at: now).delivered(through: 4, at: now)
        #expect(delivered.failures == 0 && delivered.failingSince == nil && delivered.cursor == 4)
    }
}
