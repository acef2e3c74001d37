/// A range of addresses the operator opens to webhooks (`--allow-webhook-host 10.1.0.0/16`):
/// an address and a prefix length, IPv4 or IPv6.
struct WebhookAddressRange: Sendable, Hashable {
    let network: WebhookAddress
    let prefixLength: Int

    /// Parses `address/length`; nil for anything else.
    init?(_ text: String) {
        let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2, let network = WebhookAddress(parts[0]), let length = Int(parts[1]),
            (0...network.bytes.count * 8).contains(length)
        else { return nil }
        self.network = network
        prefixLength = length
    }

    /// Whether `address` is in the range (an IPv4 address also in its IPv6 forms).
    func contains(_ address: WebhookAddress) -> Bool {
        let candidate = address.bytes.count == network.bytes.count ? address : address.embeddedIPv4
        guard let candidate, candidate.bytes.count == network.bytes.count else { return false }
        var remaining = prefixLength
        for (have, want) in zip(candidate.bytes, network.bytes) where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xff << (8 - bits))
            guard have & mask == want & mask else { return false }
            remaining -= bits
        }
        return true
    }
}
