/// Unguessable values from the system's cryptographic random source.
public enum SecureRandom {
    /// Random bytes.
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// A URL-safe string carrying the given number of random bytes.
    public static func token(bytes count: Int) -> String {
        Base64URL.encode(bytes(count))
    }

    /// A lower-case hexadecimal string of the given number of random bytes.
    public static func hex(bytes count: Int) -> String {
        bytes(count).map { byte in
            let text = String(byte, radix: 16)
            return byte < 16 ? "0" + text : text
        }.joined()
    }

    /// A random positive 64-bit number below the given bound.
    public static func number(below bound: Int64) -> Int64 {
        var generator = SystemRandomNumberGenerator()
        return Int64.random(in: 1..<bound, using: &generator)
    }
}
