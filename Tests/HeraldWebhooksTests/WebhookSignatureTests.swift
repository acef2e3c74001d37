import Foundation
import Testing

@testable import HeraldWebhooks

/// The signature header (docs/EVENTS.md) and where webhooks may post (SEMANTICS E5).
@Suite struct WebhookSignatureTests {
    @Test func E5_aSignatureVerifiesForItsBodyAndSecretWithinTheToleranceOnly() {
        let body = Array(#"{"id":"1","type":"delivered"}"#.utf8)
        let header = WebhookSignature.header(secret: "whsec_a", body: body, at: 1_800_000_000)
        #expect(header.hasPrefix("t=1800000000,v1=") && header.count == "t=1800000000,v1=".count + 64)
        #expect(WebhookSignature.verify(header: header, body: body, secret: "whsec_a", now: 1_800_000_100))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: "whsec_b", now: 1_800_000_100))
        #expect(!WebhookSignature.verify(header: header, body: body + [32], secret: "whsec_a", now: 1_800_000_100))
        #expect(!WebhookSignature.verify(header: header, body: body, secret: "whsec_a", now: 1_800_000_301))
        #expect(!WebhookSignature.verify(header: "v1=00", body: body, secret: "whsec_a", now: 1_800_000_000))
        // A vector computed with Python's hmac: HMAC-SHA256(key "k", "1.{}").
        #expect(
            WebhookSignature.header(secret: "k", body: Array("{}".utf8), at: 1)
                == "t=1,v1=3dd49b2593d0f9a349e9e71c4bde3e2b862c2be4003fe9b4ba81332029310158")
    }

    @Test func E5_onlyHTTPSOutsideLoopbackUnlessAllowedAndNeverHeraldsOwnListeners() throws {
        let policy = WebhookTargetPolicy(
            allowedHosts: ["127.0.0.1"], ownHosts: ["127.0.0.1", "localhost", "push.example"], ownPorts: [8080, 5228])
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try policy.check("http://127.0.0.1:8080/v1/x") }
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try policy.check("https://push.example:5228/") }
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try policy.check("http://hooks.example/") }
        // `localhost` is the allowed 127.0.0.1, on a port of none of Herald's listeners.
        #expect(try policy.check("https://localhost:9000/").address == "127.0.0.1")
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try policy.check("http://localhost:8080/") }
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try policy.check("ftp://hooks.example/") }
        #expect(try policy.check("http://127.0.0.1:9000/hook").url.port == 9000)
        let strict = WebhookTargetPolicy()
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try strict.check("https://127.0.0.1:9000/hook") }
    }
}
