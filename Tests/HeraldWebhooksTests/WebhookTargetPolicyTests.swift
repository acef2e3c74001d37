import Testing

@testable import HeraldWebhooks

/// SEMANTICS E5: webhooks post only where every address of the target is public, unless
/// the operator opens a host or a range; the address checked is the one connected to.
@Suite struct WebhookTargetPolicyTests {
    @Test func E5_privateLinkLocalSharedAndTranslatedAddressesAreRefusedByDefault() throws {
        let policy = WebhookTargetPolicy()
        for url in [
            "https://169.254.169.254/latest", "https://10.0.0.1/", "https://172.16.5.4/", "https://192.168.1.1/",
            "https://100.64.0.1/", "https://0.0.0.0/", "https://224.0.0.1/", "https://[fe80::1]/",
            "https://[fd00::1]/", "https://[::1]/", "https://[::ffff:10.0.0.1]/", "https://[::7f00:1]/",
            "https://[64:ff9b::a9fe:a9fe]/", "https://[64:ff9b::5db8:d822]/", "https://[ff02::1]/",
        ] {
            #expect(throws: WebhookTargetPolicy.Refusal.self, "\(url)") { try policy.check(url) }
        }
        #expect(try policy.check("https://93.184.216.34/hook").address == "93.184.216.34")
        #expect(try policy.check("https://[2606:2800:220:1::1]/hook").address == "2606:2800:220:1::1")
    }

    @Test func E5_anOperatorOpensARangeDeliberately() throws {
        let policy = WebhookTargetPolicy(allowedHosts: ["10.1.0.0/16", "fd12::/16"])
        #expect(try policy.check("https://10.1.2.3/hook").address == "10.1.2.3")
        #expect(try policy.check("https://[fd12::5]/hook").address == "fd12::5")
        #expect(try policy.check("https://[::ffff:10.1.9.9]/hook").address == "::ffff:10.1.9.9")
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try policy.check("https://10.2.0.1/") }
        // A range is no host: plain HTTP stays refused.
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try policy.check("http://10.1.2.3/") }
    }

    /// `localhost` is the allowed 127.0.0.1 (and the request goes there), not a host of its own.
    @Test func E5_anAllowedAddressAllowsTheNamesThatResolveToIt() throws {
        let target = try WebhookTargetPolicy(allowedHosts: ["127.0.0.1"]).check("http://localhost:9000/hook")
        #expect(target.address == "127.0.0.1")
        #expect(throws: WebhookTargetPolicy.Refusal.self) { try WebhookTargetPolicy().check("http://localhost:9000/") }
        let refusal = #expect(throws: WebhookTargetPolicy.Refusal.self) {
            try WebhookTargetPolicy().check("http://127.0.0.1:9000/")
        }
        #expect(refusal?.description.contains("--allow-webhook-host") == true)
        let unknown = #expect(throws: WebhookTargetPolicy.Refusal.self) {
            try WebhookTargetPolicy().check("https://nowhere.invalid/")
        }
        #expect(unknown?.unresolved == true)
    }

    @Test func E5_theHostsOwnAddressesAreKnown() {
        #expect(WebhookTargetPolicy.hostAddresses().contains(WebhookAddress("127.0.0.1")!))
        #expect(WebhookAddressRange("10.0.0.0/33") == nil && WebhookAddressRange("nonsense") == nil)
        #expect(WebhookAddress("::ffff:1.2.3.4")?.embeddedIPv4 == WebhookAddress("1.2.3.4"))
    }
}
