/// The members of a legacy JSON body, read with the type each must have; a member of
/// another type makes the body `Malformed`, as FCM answered it with a 400.
struct LegacyFields {
    private let members: [(key: String, value: JSONValue)]

    init(_ document: JSONValue) {
        members = document.objectMembers ?? []
    }

    /// The member's value; null counts as absent.
    func value(_ name: String) -> JSONValue? {
        guard let value = members.last(where: { $0.key == name })?.value, value != .null else { return nil }
        return value
    }

    func string(_ name: String) throws(LegacySendRequest.Malformed) -> String? {
        guard let value = value(name) else { return nil }
        guard let text = value.stringValue else { throw mistyped(name, "a JSON string", value) }
        return text
    }

    func bool(_ name: String) throws(LegacySendRequest.Malformed) -> Bool? {
        guard let value = value(name) else { return nil }
        guard let flag = value.boolValue else { throw mistyped(name, "a JSON boolean", value) }
        return flag
    }

    func integer(_ name: String) throws(LegacySendRequest.Malformed) -> Int64? {
        guard let value = value(name) else { return nil }
        guard let number = value.numberValue, number == number.rounded(), abs(number) < 1e15 else {
            throw mistyped(name, "a JSON number", value)
        }
        return Int64(number)
    }

    private func mistyped(_ name: String, _ type: String, _ value: JSONValue) -> LegacySendRequest.Malformed {
        LegacySendRequest.Malformed(description: "Field \"\(name)\" must be \(type): \(value.rendered)")
    }
}
