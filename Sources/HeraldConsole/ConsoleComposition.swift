import Foundation
import HeraldCore

/// The composer's form as an HTTP v1 message, so that it is checked by the same rules as
/// any app server's send: a target (`token`, `topic` or `condition`), a title and text, and
/// custom data, one `key=value` per line.
struct ConsoleComposition {
    let form: [String: String]

    func message() throws -> JSONValue {
        let target = form["target"] ?? ""
        guard ["token", "topic", "condition"].contains(target) else {
            throw HeraldError.invalidArgument("Choose a token, a topic or a condition to send to.")
        }
        var message: [(key: String, value: JSONValue)] = [(target, .string(trimmed("to")))]
        let notification = [("title", trimmed("title")), ("body", trimmed("body"))].filter { !$0.1.isEmpty }
        if !notification.isEmpty { message.append(("notification", .stringObject(notification))) }
        var data: [(String, String)] = []
        for line in (form["data"] ?? "").split(whereSeparator: \.isNewline) {
            let pair = line.trimmingCharacters(in: .whitespaces)
            guard !pair.isEmpty else { continue }
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw HeraldError.invalidArgument("Custom data takes one key=value per line: \(pair)")
            }
            data.append((String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
        }
        if !data.isEmpty { message.append(("data", .stringObject(data))) }
        return .object([("message", .object(message))])
    }

    private func trimmed(_ field: String) -> String {
        (form[field] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
