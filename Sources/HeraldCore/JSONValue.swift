/// A JSON document as a value: what Herald reads from and writes to every JSON surface.
///
/// Objects keep their members in document order so that rendering is deterministic.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(key: String, value: JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: return false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null: hasher.combine(0)
        case .bool(let b): hasher.combine(b)
        case .number(let n): hasher.combine(n)
        case .string(let s): hasher.combine(s)
        case .array(let a): hasher.combine(a)
        case .object(let members):
            for member in members {
                hasher.combine(member.key)
                hasher.combine(member.value)
            }
        }
    }

    /// The value of an object member, or nil when this is not an object or has no such member.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first { $0.key == key }?.value
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The Boolean, when this is a Boolean.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The number, when this is a number.
    public var numberValue: Double? {
        if case .number(let n) = self { return n }
        return nil
    }

    /// The members, when this is an object.
    public var objectMembers: [(key: String, value: JSONValue)]? {
        if case .object(let m) = self { return m }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayElements: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// A string-to-string map, when this is an object whose members are all strings.
    public var stringMap: [String: String]? {
        guard let members = objectMembers else { return nil }
        var map: [String: String] = [:]
        for member in members {
            guard let value = member.value.stringValue else { return nil }
            map[member.key] = value
        }
        return map
    }

    /// Builds an object from string pairs, in the order given.
    public static func stringObject(_ pairs: [(String, String)]) -> JSONValue {
        .object(pairs.map { (key: $0.0, value: .string($0.1)) })
    }

    /// Builds an object from a dictionary with keys sorted, so output is deterministic.
    public static func sortedStringObject(_ map: [String: String]) -> JSONValue {
        .object(map.sorted { $0.key < $1.key }.map { (key: $0.key, value: .string($0.value)) })
    }

    /// A short name of the JSON type, as Google's error messages use it.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "bool"
        case .number: return "number"
        case .string: return "string"
        case .array: return "list"
        case .object: return "object"
        }
    }
}
