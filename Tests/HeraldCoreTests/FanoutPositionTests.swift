import HeraldCore
import Testing

/// A fanout's stored cursor (SEMANTICS T3: a job resumes where it stopped).
@Suite struct FanoutPositionTests {
    func registration(_ token: String, device: UInt64) -> Registration {
        Registration(
            token: token, kind: .app, projectID: "p", sender: "1", appID: "com.example.app", subtype: nil,
            platform: .android,
            androidID: device, createdAt: Timestamp(seconds: 1))
    }

    @Test func T3_cursorsReadBackAsThePositionTheyWereWrittenFrom() {
        let positions: [FanoutPosition] = [
            .start, .after(device: -2, token: "dXk1:APA91b-x_y"), .after(device: .max, token: ""),
            .after(device: 7, token: "@3:t"), .afterToken("t1"), .afterToken("dXk1:APA91b"),
        ]
        for position in positions { #expect(FanoutPosition(cursor: position.cursor) == position) }
        // Bare tokens, and anything not a device and a token, are cursors of the older token order.
        #expect(FanoutPosition(cursor: "@x:t1") == .afterToken("@x:t1"))
        #expect(FanoutPosition(cursor: "@12") == .afterToken("@12"))
    }

    @Test func T3_aPositionAdvancesInItsOwnOrder() {
        let high = registration("a", device: .max)  // -1 as stored
        let low = registration("b", device: 3)
        #expect(FanoutPosition.start.advanced(past: high) == .after(device: -1, token: "a"))
        #expect(FanoutPosition.afterToken("0").advanced(past: high) == .afterToken("a"))
        let all = [low, registration("c", device: 3), high]
        #expect(FanoutPosition.start.page(of: all, limit: 2).map(\.token) == ["a", "b"])
        #expect(FanoutPosition.after(device: -1, token: "a").page(of: all, limit: 5).map(\.token) == ["b", "c"])
        #expect(FanoutPosition.after(device: 3, token: "b").page(of: all, limit: 5).map(\.token) == ["c"])
        #expect(FanoutPosition.afterToken("a").page(of: all, limit: 5).map(\.token) == ["b", "c"])
    }
}
