import HeraldHTTP
import Testing

/// Who may read `GET /metrics`, which names every project with its counts.
@Suite struct MetricsAccessTests {
    @Test func metricsAreOpenOnLoopbackOnlyUnlessATokenIsSet() {
        #expect(MetricsAccess.forListening(on: "127.0.0.1", token: nil) == .open)
        #expect(MetricsAccess.forListening(on: "::1", token: nil) == .open)
        #expect(MetricsAccess.forListening(on: "0.0.0.0", token: nil) == .closed)
        #expect(MetricsAccess.forListening(on: "10.1.2.3", token: "") == .closed)
        #expect(MetricsAccess.forListening(on: "0.0.0.0", token: "s3cret") == .bearer("s3cret"))
    }

    @Test func aTokenIsRequiredExactly() {
        let access = MetricsAccess.bearer("s3cret")
        #expect(access.allows(authorization: "Bearer s3cret"))
        for wrong in [nil, "", "Bearer s3cre", "Bearer s3cret ", "bearer s3cretx", "s3cret"] {
            #expect(!access.allows(authorization: wrong))
        }
        #expect(!MetricsAccess.closed.allows(authorization: "Bearer s3cret"))
        #expect(MetricsAccess.open.allows(authorization: nil))
    }
}
