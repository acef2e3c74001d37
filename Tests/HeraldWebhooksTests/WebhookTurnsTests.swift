import HeraldCore
import HeraldStorage
import Testing

@testable import HeraldWebhooks

/// SEMANTICS E5: each webhook is worked on by itself, within a node's bound and a
/// project's share of it.
@Suite struct WebhookTurnsTests {
    func webhook(_ id: String, project: String) -> Webhook {
        Webhook(
            id: id, projectID: project, url: "https://hooks.example/\(id)", secret: "s", cursor: 0,
            nextAttemptAt: Timestamp(seconds: 0), createdAt: Timestamp(seconds: 0))
    }

    @Test func E5_aProjectTakesOnlyItsShareOfTheTurnsAndAWebhookRunsOnce() {
        var turns = WebhookTurns(atOnce: 4, perProject: 2)
        let claimed = [
            webhook("a1", project: "a"), webhook("a2", project: "a"), webhook("a3", project: "a"),
            webhook("b1", project: "b"),
        ]
        #expect(turns.start(claimed).map(\.id) == ["a1", "a2", "b1"])
        // Claimed again while under way: not started twice.
        #expect(turns.start([webhook("a1", project: "a"), webhook("c1", project: "c")]).map(\.id) == ["c1"])
        #expect(turns.room == 0)
        #expect(turns.start([webhook("d1", project: "d")]).isEmpty)
        // A turn that ends makes room, for the project that waited too.
        turns.finished(webhook("a1", project: "a"))
        #expect(turns.start([webhook("a3", project: "a")]).map(\.id) == ["a3"])
    }
}
