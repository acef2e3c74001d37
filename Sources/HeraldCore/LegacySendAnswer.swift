/// What `/fcm/send` answers (reference §5.2): a result per registration token in the order
/// asked, one for a topic or condition, or a device group's counts.
public enum LegacySendAnswer: Sendable, Equatable {
    /// The outcome for one target.
    public enum Result: Sendable, Equatable {
        case sent(messageID: String)
        /// The legacy error name, such as `NotRegistered`.
        case failed(String)
    }

    /// Tokens (`to` or `registration_ids`): `multicast_id` and the results in order.
    case registrations(multicastID: Int64, [Result])
    /// A topic or condition: a numeric `message_id`, or an error.
    case topic(Result)
    /// A device group's notification key: how many members were sent to and which were not.
    case group(success: Int, failedTokens: [String])

    /// A new multicast id: positive, and exact in every JSON reader (below 2^53).
    public static func makeMulticastID() -> Int64 {
        SecureRandom.number(below: 1 << 53)
    }

    /// The JSON answer.
    public var json: JSONValue {
        switch self {
        case .registrations(let multicastID, let results):
            let failures = results.filter { if case .failed = $0 { true } else { false } }.count
            return .object([
                ("multicast_id", .number(Double(multicastID))),
                ("success", .number(Double(results.count - failures))),
                ("failure", .number(Double(failures))),
                ("canonical_ids", .number(0)),
                ("results", .array(results.map(Self.json(of:)))),
            ])
        case .topic(.sent(let messageID)):
            return .object([("message_id", Self.topicMessageID(messageID))])
        case .topic(.failed(let error)):
            return .object([("error", .string(error))])
        case .group(let success, let failedTokens):
            var members: [(key: String, value: JSONValue)] = [
                ("success", .number(Double(success))), ("failure", .number(Double(failedTokens.count))),
            ]
            if !failedTokens.isEmpty {
                members.append(("failed_registration_ids", .array(failedTokens.map(JSONValue.string))))
            }
            return .object(members)
        }
    }

    /// The plain-text answer to a form send: `id=…` or `Error=…` for its one token.
    public var plainText: String {
        let result: Result
        switch self {
        case .registrations(_, let results): result = results.first ?? .failed("MissingRegistration")
        case .topic(let topicResult): result = topicResult
        case .group(let success, let failed): result = success > 0 ? .sent(messageID: "") : .failed(failed.first ?? "")
        }
        switch result {
        case .sent(let messageID): return "id=\(messageID)\n"
        case .failed(let error): return "Error=\(error)\n"
        }
    }

    private static func json(of result: Result) -> JSONValue {
        switch result {
        case .sent(let messageID): .object([("message_id", .string(messageID))])
        case .failed(let error): .object([("error", .string(error))])
        }
    }

    /// A topic answer's `message_id` is a number: the time part of Herald's message id.
    private static func topicMessageID(_ messageID: String) -> JSONValue {
        guard messageID.hasPrefix("0:"), let end = messageID.firstIndex(of: "%"),
            let number = Int64(messageID[messageID.index(messageID.startIndex, offsetBy: 2)..<end])
        else { return .string(messageID) }
        return .number(Double(number))
    }
}
