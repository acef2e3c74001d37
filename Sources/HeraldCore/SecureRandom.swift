/// Unguessable values from the system's cryptographic random source.
public enum SecureRandom {
    /// Random bytes, read eight at a time (each read is a system call; a message id costs one).
    public static func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            withUnsafeBytes(of: generator.next()) { bytes.append(contentsOf: $0) }
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// A URL-safe string carrying the given number of random bytes.
    public static func token(bytes count: Int) -> String {
        Base64URL.encode(bytes(count))
    }

    /// A lower-case hexadecimal string of the given number of random bytes.
    public static func hex(bytes count: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(count * 2)
        for byte in bytes(count) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// A random positive 64-bit number below the given bound.
    public static func number(below bound: Int64) -> Int64 {
        var generator = SystemRandomNumberGenerator()
        return Int64.random(in: 1..<bound, using: &generator)
    }
}
