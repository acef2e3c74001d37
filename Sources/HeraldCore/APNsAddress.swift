/// Where an Apple app instance is reached through Apple's push service (APNs): its device
/// token and whether the token is for the development (sandbox) environment. Messages to a
/// registration that has one are handed to APNs (SEMANTICS A1).
public struct APNsAddress: Sendable, Hashable {
    /// The device token, as lower-case hexadecimal digits.
    public var deviceToken: String
    /// Whether the token is for APNs' development environment rather than production.
    public var isSandbox: Bool

    /// An address for a token written as hexadecimal digits, of either case; nil when it is
    /// not one (an even number of 32 to 200 digits: Apple's tokens are 32 bytes today and
    /// may grow).
    public init?(deviceToken: String, isSandbox: Bool) {
        let digits = deviceToken.utf8
        guard (32...200).contains(digits.count), digits.count % 2 == 0,
            digits.allSatisfy({ Self.hexValue($0) != nil })
        else { return nil }
        self.deviceToken = deviceToken.lowercased()
        self.isSandbox = isSandbox
    }

    /// The form the Firebase SDKs send and Herald stores: `p_<hex>` for production,
    /// `s_<hex>` for the sandbox.
    public var tuple: String { (isSandbox ? "s_" : "p_") + deviceToken }

    /// An address read from its `tuple` form; nil when it is not one.
    public init?(tuple: String) {
        guard tuple.hasPrefix("p_") || tuple.hasPrefix("s_") else { return nil }
        self.init(deviceToken: String(tuple.dropFirst(2)), isSandbox: tuple.hasPrefix("s_"))
    }

    /// The environment a credential must serve to reach it.
    public var environment: APNsCredential.Environment { isSandbox ? .development : .production }

    /// The token shortened for logs, which never carry a whole one.
    public var redacted: String { String(deviceToken.prefix(8)) + "…" }

    static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
