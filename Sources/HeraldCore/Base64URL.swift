/// URL-safe base64 (RFC 4648 §5) without padding, as tokens and JWTs use it.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let decodeTable: [Int8] = {
        var table = [Int8](repeating: -1, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = Int8(index) }
        // Standard base64 characters are accepted too.
        table[Int(UInt8(ascii: "+"))] = 62
        table[Int(UInt8(ascii: "/"))] = 63
        return table
    }()

    /// Whether a byte is in the URL-safe alphabet.
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// Encodes bytes without padding.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                output.append(alphabet[Int((buffer >> UInt32(bits)) & 0x3F)])
            }
        }
        if bits > 0 {
            output.append(alphabet[Int((buffer << UInt32(6 - bits)) & 0x3F)])
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Encodes bytes URL-safe with `=` padding, as Web Push `Crypto-Key` values need.
    public static func encodePadded(_ bytes: some Collection<UInt8>) -> String {
        var text = encode(bytes)
        while text.utf8.count % 4 != 0 { text += "=" }
        return text
    }

    /// Decodes URL-safe or standard base64, padded or not; nil when malformed or not in
    /// canonical form (the unused bits of the last character must be zero), so that a
    /// changed character can never decode to the same bytes.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        // One contiguous copy, read as bytes: walking a generic string's UTF-8 view from
        // another module costs a call per byte.
        var contiguous = String(text)
        return contiguous.withUTF8 { decode(utf8: $0) }
    }

    private static func decode(utf8 text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text {
            if byte == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0 else { return nil }
            let value = decodeTable[Int(byte)]
            guard value >= 0 else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8((buffer >> UInt32(bits)) & 0xFF))
            }
        }
        guard bits < 6, padding <= 2, buffer & ((1 << UInt32(bits)) - 1) == 0 else { return nil }
        return output
    }

    /// Encodes bytes with standard base64 and padding, as PEM and JSON key files use it.
    public static func encodeStandard(_ bytes: some Sequence<UInt8>) -> String {
        var text = encode(bytes).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.utf8.count % 4 != 0 { text += "=" }
        return text
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
