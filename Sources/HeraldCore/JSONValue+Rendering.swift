extension JSONValue {
    /// The compact JSON text of this value.
    public var rendered: String {
        var output = ""
        output.reserveCapacity(64)
        render(into: &output)
        return output
    }

    /// The compact JSON text of this value, as UTF-8 bytes.
    public var renderedBytes: [UInt8] { Array(rendered.utf8) }

    /// Appends the compact JSON text of this value.
    public func render(into output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let b): output += b ? "true" : "false"
        case .number(let n): output += Self.renderNumber(n)
        case .string(let s): Self.renderString(s, into: &output)
        case .array(let elements):
            output += "["
            for (i, element) in elements.enumerated() {
                if i > 0 { output += "," }
                element.render(into: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (i, member) in members.enumerated() {
                if i > 0 { output += "," }
                Self.renderString(member.key, into: &output)
                output += ":"
                member.value.render(into: &output)
            }
            output += "}"
        }
    }

    static func renderNumber(_ n: Double) -> String {
        if n.rounded(.towardZero) == n, abs(n) < 1e15 {
            return String(Int64(n))
        }
        return String(n)
    }

    /// Appends a JSON string literal, escaping what RFC 8259 requires.
    public static func renderString(_ s: String, into output: inout String) {
        output += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        output += "\""
    }
}
