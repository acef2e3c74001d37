import Crypto
import Foundation

/// The `Herald-Signature` header of a webhook request (docs/EVENTS.md): `t=<unix
/// seconds>,v1=<hex HMAC-SHA256>`, the HMAC keyed with the webhook's secret over the
/// timestamp, a dot and the body. A receiver recomputes it, compares in constant time and
/// refuses a timestamp too far from its own clock, so a captured request cannot be replayed
/// later.
public enum WebhookSignature {
    /// The header for `body` sent at `seconds` (Unix time).
    public static func header(secret: String, body: [UInt8], at seconds: Int64) -> String {
        "t=\(seconds),v1=\(mac(secret: secret, body: body, at: seconds))"
    }

    static func mac(secret: String, body: [UInt8], at seconds: Int64) -> String {
        var signed = Array("\(seconds).".utf8)
        signed += body
        let code = HMAC<SHA256>.authenticationCode(for: signed, using: SymmetricKey(data: Array(secret.utf8)))
        return code.map { String(format: "%02x", $0) }.joined()
    }

    /// Whether `header` signs `body` with `secret` at a time within `toleranceSeconds` of `now`.
    public static func verify(
        header: String, body: [UInt8], secret: String, now seconds: Int64, toleranceSeconds: Int64 = 300
    ) -> Bool {
        var timestamp: Int64?
        var signatures: [String] = []
        for part in header.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2 else { continue }
            if pair[0] == "t" { timestamp = Int64(pair[1]) }
            if pair[0] == "v1" { signatures.append(pair[1]) }
        }
        guard let timestamp, abs(seconds - timestamp) <= toleranceSeconds else { return false }
        let expected = Array(mac(secret: secret, body: body, at: timestamp).utf8)
        return signatures.contains {
            Array($0.utf8).count == expected.count
                && zip(Array($0.utf8), expected).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
        }
    }
}
