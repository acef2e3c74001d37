import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IP address a webhook's host resolved to, as its bytes (4 for IPv4, 16 for IPv6), and
/// whether webhooks may post there (SEMANTICS E5): not to loopback, link-local, private or
/// shared ranges, multicast, or addresses that carry such an IPv4 address inside IPv6
/// (IPv4-mapped, IPv4-compatible, NAT64), unless the operator opened a range.
struct WebhookAddress: Sendable, Hashable {
    let bytes: [UInt8]

    init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// Parses an IPv4 or IPv6 literal.
    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            self.init(bytes: withUnsafeBytes(of: v4) { Array($0) })
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            self.init(bytes: withUnsafeBytes(of: v6) { Array($0) })
        } else {
            return nil
        }
    }

    /// The address of a socket address, if it is an IP one.
    init?(_ address: SocketAddress) {
        switch address {
        case .v4(let v4): self.init(bytes: withUnsafeBytes(of: v4.address.sin_addr) { Array($0) })
        case .v6(let v6): self.init(bytes: withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) })
        default: return nil
        }
    }

    /// The address as text, for the connection and for errors.
    var text: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var copy = bytes
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        guard inet_ntop(family, &copy, &buffer, socklen_t(buffer.count)) != nil else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The IPv4 address an IPv6 one carries: IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible
    /// (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d, 64:ff9b:1::/48) forms.
    var embeddedIPv4: WebhookAddress? {
        guard bytes.count == 16 else { return nil }
        let head = Array(bytes[0..<12])
        let mapped = Array(repeating: UInt8(0), count: 10) + [0xff, 0xff]
        let compatible = Array(repeating: UInt8(0), count: 12)
        let nat64 = [0x00, 0x64, 0xff, 0x9b] + Array(repeating: UInt8(0), count: 8)
        let localNAT64: [UInt8] = [0x00, 0x64, 0xff, 0x9b, 0x00, 0x01]
        guard head == mapped || head == compatible || head == nat64 || Array(bytes[0..<6]) == localNAT64 else {
            return nil
        }
        return WebhookAddress(bytes: Array(bytes[12..<16]))
    }

    /// Why webhooks may not post to this address by default; nil when they may.
    var refusal: String? {
        if let inner = embeddedIPv4 {
            // Every such form reaches IPv4 through a translator or the host's own stack.
            return inner.refusal ?? "an IPv4 address inside IPv6 (mapped, compatible or NAT64)"
        }
        if bytes.count == 4 {
            let (a, b) = (bytes[0], bytes[1])
            switch (a, b) {
            case (0, _): return "an unspecified address"
            case (127, _): return "loopback"
            case (10, _), (172, 16...31), (192, 168): return "a private address"
            case (169, 254): return "link-local"
            case (100, 64...127): return "shared address space (carrier NAT)"
            case (192, 0) where bytes[2] == 0: return "IETF protocol assignments"
            case (198, 18...19): return "a benchmarking network"
            case (224...255, _): return "multicast or reserved"
            default: return nil
            }
        }
        if bytes.allSatisfy({ $0 == 0 }) { return "an unspecified address" }
        if bytes == Array(repeating: 0, count: 15) + [1] { return "loopback" }
        switch (bytes[0], bytes[1] & 0xc0) {
        case (0xfe, 0x80): return "link-local"
        case (0xfe, 0xc0): return "site-local"
        case (0xfc...0xfd, _): return "a unique local (private) address"
        case (0xff, _): return "multicast"
        default: return nil
        }
    }

    /// The addresses `host` resolves to now (every one, not only the first); empty when
    /// it does not resolve.
    static func resolve(_ host: String) -> [WebhookAddress] {
        if let literal = WebhookAddress(host.trimmingBrackets) { return [literal] }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var found: [WebhookAddress] = []
        var entry: UnsafeMutablePointer<addrinfo>? = first
        while let current = entry {
            if let address = current.pointee.ai_addr {
                switch Int32(address.pointee.sa_family) {
                case AF_INET:
                    let v4 = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr }
                    found.append(WebhookAddress(bytes: withUnsafeBytes(of: v4) { Array($0) })!)
                case AF_INET6:
                    let v6 = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    found.append(WebhookAddress(bytes: withUnsafeBytes(of: v6) { Array($0) })!)
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        var seen = Set<WebhookAddress>()
        return found.filter { seen.insert($0).inserted }
    }
}

extension String {
    /// An IPv6 literal as a URL writes it, without its brackets.
    fileprivate var trimmingBrackets: String {
        hasPrefix("[") && hasSuffix("]") ? String(dropFirst().dropLast()) : self
    }
}
