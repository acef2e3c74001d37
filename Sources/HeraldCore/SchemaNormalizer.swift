/// Checks a JSON value against a schema and rewrites it in canonical form: proto field
/// names, upper-case enum names, durations as whole seconds (`"3600s"`), nulls removed.
public enum SchemaNormalizer {
    /// Normalizes an object against its schema; `path` names it in error messages.
    public static func normalize(_ value: JSONValue, as schema: ObjectSchema, path: String) throws(HeraldError)
        -> JSONValue
    {
        try normalize(value, as: schema, path: { path })
    }

    /// Paths are made only for an error message, so a valid message builds none: each level
    /// passes a closure that makes its path from its parent's.
    private static func normalize(_ value: JSONValue, as schema: ObjectSchema, path: () -> String)
        throws(HeraldError) -> JSONValue
    {
        guard let members = value.objectMembers else {
            throw invalidValue(at: path(), type: "TYPE_MESSAGE", value)
        }
        var output: [(key: String, value: JSONValue)] = []
        output.reserveCapacity(members.count)
        for member in members {
            let name = protoName(member.key)
            guard let type = schema.fields[name] else {
                let text =
                    "Invalid JSON payload received. Unknown name \"\(member.key)\" at '\(path())': Cannot find field."
                throw HeraldError.invalidField(path(), text)
            }
            if case .null = member.value { continue }
            // A schema has a few dozen fields at most, so a scan finds a repeated one.
            guard !output.contains(where: { $0.key == name }) else {
                throw HeraldError.invalidField(
                    path(), "Invalid JSON payload received. Duplicate field \"\(member.key)\" at '\(path())'.")
            }
            let normalized = try normalize(
                member.value, as: type,
                path: {
                    let parent = path()
                    return parent.isEmpty ? name : "\(parent).\(name)"
                })
            output.append((key: name, value: normalized))
        }
        return .object(output)
    }

    private static func normalize(_ value: JSONValue, as type: FieldType, path: () -> String) throws(HeraldError)
        -> JSONValue
    {
        switch type {
        case .string:
            guard case .string = value else { throw invalidValue(at: path(), type: "TYPE_STRING", value) }
            return value
        case .bool:
            guard case .bool = value else { throw invalidValue(at: path(), type: "TYPE_BOOL", value) }
            return value
        case .number:
            switch value {
            case .number: return value
            case .string(let text):
                guard let number = Double(text), number.isFinite else {
                    throw invalidValue(at: path(), type: "TYPE_FLOAT", value)
                }
                return .number(number)
            default: throw invalidValue(at: path(), type: "TYPE_FLOAT", value)
            }
        case .int32:
            let number: Double?
            switch value {
            case .number(let n): number = n
            case .string(let text): number = Int32(text).map(Double.init)
            default: number = nil
            }
            guard let number, number.rounded(.towardZero) == number, number >= Double(Int32.min),
                number <= Double(Int32.max)
            else { throw invalidValue(at: path(), type: "TYPE_INT32", value) }
            return .number(number)
        case .duration:
            guard case .string(let text) = value, let seconds = ProtoDuration.parseSeconds(text) else {
                throw HeraldError.invalidField(
                    path(),
                    "Invalid value at '\(path())' (type.googleapis.com/google.protobuf.Duration), \(value.rendered): "
                        + "a duration is a number of seconds with an 's' suffix, such as \"3.5s\"")
            }
            return .string(ProtoDuration.format(seconds: seconds))
        case .timestamp:
            guard case .string(let text) = value, RFC3339.isValid(text) else {
                throw HeraldError.invalidField(
                    path(),
                    "Invalid value at '\(path())' (type.googleapis.com/google.protobuf.Timestamp), \(value.rendered)")
            }
            return value
        case .enumeration(let typeName, let names):
            switch value {
            case .string(let text):
                let upper = text.uppercased()
                guard names.contains(upper) else {
                    throw HeraldError.invalidField(
                        path(), "Invalid value at '\(path())' (type.googleapis.com/\(typeName)), \(value.rendered)")
                }
                return .string(upper)
            case .number(let n):
                guard n.rounded(.towardZero) == n, n >= 0, n < Double(names.count) else {
                    throw HeraldError.invalidField(
                        path(), "Invalid value at '\(path())' (type.googleapis.com/\(typeName)), \(value.rendered)")
                }
                return .string(names[Int(n)])
            default:
                throw HeraldError.invalidField(
                    path(), "Invalid value at '\(path())' (type.googleapis.com/\(typeName)), \(value.rendered)")
            }
        case .stringMap:
            guard let members = value.objectMembers else { throw invalidValue(at: path(), type: "TYPE_MESSAGE", value) }
            var output: [(key: String, value: JSONValue)] = []
            var seen: Set<String> = []
            for (index, member) in members.enumerated() {
                guard case .string = member.value else {
                    throw invalidValue(at: "\(path())[\(index)].value", type: "TYPE_STRING", member.value)
                }
                guard seen.insert(member.key).inserted else {
                    throw HeraldError.invalidField(path(), "Duplicate map key \"\(member.key)\" at '\(path())'.")
                }
                output.append(member)
            }
            return .object(output)
        case .object(let schema):
            return try normalize(value, as: schema, path: path)
        case .array(let elementType):
            guard let elements = value.arrayElements else { throw invalidValue(at: path(), type: "TYPE_LIST", value) }
            var output: [JSONValue] = []
            output.reserveCapacity(elements.count)
            for (index, element) in elements.enumerated() {
                output.append(try normalize(element, as: elementType, path: { "\(path())[\(index)]" }))
            }
            return .array(output)
        case .freeform:
            guard case .object = value else {
                throw invalidValue(at: path(), type: "type.googleapis.com/google.protobuf.Struct", value)
            }
            return value
        }
    }

    /// The proto field name for a JSON name: lowerCamelCase becomes snake_case.
    static func protoName(_ jsonName: String) -> String {
        guard jsonName.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
            return jsonName
        }
        var output = ""
        output.reserveCapacity(jsonName.utf8.count + 4)
        for character in jsonName {
            if character.isUppercase {
                output += "_"
                output += character.lowercased()
            } else {
                output.append(character)
            }
        }
        return output
    }

    private static func invalidValue(at path: String, type: String, _ value: JSONValue) -> HeraldError {
        let text = "Invalid value at '\(path)' (\(type)), \(value.rendered)"
        return HeraldError.invalidField(path, text)
    }
}
