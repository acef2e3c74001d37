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

    /// This value as JSON text indented by two spaces a level, for people to read.
    public var indented: String {
        var output = ""
        renderIndented(into: &output, depth: 0)
        return output
    }

    private func renderIndented(into output: inout String, depth: Int) {
        let inner = String(repeating: "  ", count: depth + 1)
        let outer = String(repeating: "  ", count: depth)
        switch self {
        case .array(let elements) where !elements.isEmpty:
            output += "[\n"
            for (i, element) in elements.enumerated() {
                output += inner
                element.renderIndented(into: &output, depth: depth + 1)
                output += i < elements.count - 1 ? ",\n" : "\n"
            }
            output += outer + "]"
        case .object(let members) where !members.isEmpty:
            output += "{\n"
            for (i, member) in members.enumerated() {
                output += inner
                Self.renderString(member.key, into: &output)
                output += ": "
                member.value.renderIndented(into: &output, depth: depth + 1)
                output += i < members.count - 1 ? ",\n" : "\n"
            }
            output += outer + "}"
        default:
            render(into: &output)
        }
    }

    /// Whole numbers that a double holds exactly (up to 2^53) as integers, others as doubles.
    static func renderNumber(_ n: Double) -> String {
        if n.rounded(.towardZero) == n, abs(n) <= 9_007_199_254_740_992 {
            return String(Int64(n))
        }
        return String(n)
    }

    /// Appends a JSON string literal, escaping what RFC 8259 requires. Runs that need no
    /// escape are copied whole: only ASCII bytes are ever escaped, and no byte of a
    /// multi-byte UTF-8 sequence is ASCII, so a run starts and ends on a scalar boundary.
    /// Runs are cut from the scalar view, whose bounds need scalar alignment only: `\r\n`,
    /// or a quote followed by a combining mark, is one character cut in two.
    public static func renderString(_ s: String, into output: inout String) {
        output += "\""
        let utf8 = s.utf8
        let scalars = s.unicodeScalars
        var run = utf8.startIndex
        var index = run
        while index != utf8.endIndex {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                utf8.formIndex(after: &index)
                continue
            }
            output += Substring(scalars[run..<index])
            output += escaped(byte)
            utf8.formIndex(after: &index)
            run = index
        }
        output += Substring(scalars[run..<index])
        output += "\""
    }

    private static func escaped(_ byte: UInt8) -> String {
        switch byte {
        case UInt8(ascii: "\""): return "\\\""
        case UInt8(ascii: "\\"): return "\\\\"
        case UInt8(ascii: "\n"): return "\\n"
        case UInt8(ascii: "\r"): return "\\r"
        case UInt8(ascii: "\t"): return "\\t"
        case 0x08: return "\\b"
        case 0x0C: return "\\f"
        default:
            let hex = String(byte, radix: 16)
            return "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
        }
    }
}
