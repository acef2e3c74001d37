/// The `uaid` a client of Mozilla's push protocol is given: its device's android id and
/// security token, 16 hex digits each, so the id is the device's credential (as a `uaid`
/// is autopush's) and needs no table of its own. Never logged whole.
public enum MozillaPushUAID {
    /// The id for a device.
    public static func make(androidID: UInt64, securityToken: UInt64) -> String {
        hex(androidID) + hex(securityToken)
    }

    /// The device an id names, if it is one of ours in form (32 lower-case hex digits).
    public static func device(_ uaid: String) -> (androidID: UInt64, securityToken: UInt64)? {
        guard uaid.utf8.count == 32, uaid.utf8.allSatisfy({ isLowerHex($0) }),
            let androidID = UInt64(uaid.prefix(16), radix: 16), let token = UInt64(uaid.suffix(16), radix: 16)
        else { return nil }
        return (androidID, token)
    }

    /// The first eight digits, for logs.
    public static func redacted(_ uaid: String) -> String { String(uaid.prefix(8)) + "…" }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    private static func isLowerHex(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
    }
}
