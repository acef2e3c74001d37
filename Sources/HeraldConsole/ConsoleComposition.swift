import Foundation
import HeraldCore

/// The composer's form as an HTTP v1 message, so that it is checked by the same rules as
/// any app server's send: a target, the notification, custom data (one `key=value` per
/// line), an analytics label, and each platform's options (SEMANTICS P2, P3). A value the
/// form cannot turn into a message field is refused with the form field it came from.
struct ConsoleComposition {
    /// The kinds of target the composer offers; a device group is sent to by its notification key.
    static let targets = [
        ("topic", "Topic"), ("token", "Registration token"), ("condition", "Condition"),
        ("group", "Device group (notification key)"),
    ]

    let form: [String: String]

    /// The request to send, to the form's target or, given `token`, to that token instead.
    func request(to token: String? = nil, validateOnly: Bool = false) throws(ComposerFieldError) -> JSONValue {
        var message: [(key: String, value: JSONValue)] = []
        if let token {
            guard !token.isEmpty else { throw ComposerFieldError("test_token", "Enter the token to send a test to.") }
            message.append(("token", .string(token)))
        } else {
            let target = form["target"] ?? ""
            guard let kind = ["topic": "topic", "token": "token", "condition": "condition", "group": "token"][target]
            else { throw ComposerFieldError("target", "Choose a topic, a token, a condition or a device group.") }
            guard !value("to").isEmpty else { throw ComposerFieldError("to", "Enter what to send to.") }
            message.append((kind, .string(value("to"))))
        }
        let notification = pairs([("title", "title"), ("body", "body"), ("image", "image")])
        if !notification.isEmpty { message.append(("notification", .stringObject(notification))) }
        let data = try customData()
        if !data.isEmpty { message.append(("data", .stringObject(data))) }
        if !value("analytics_label").isEmpty {
            message.append(("fcm_options", .stringObject([("analytics_label", value("analytics_label"))])))
        }
        let android = try androidOptions()
        if !android.isEmpty { message.append(("android", .object(android))) }
        let apns = try appleOptions()
        if !apns.isEmpty { message.append(("apns", .object(apns))) }
        let webpush = try webOptions()
        if !webpush.isEmpty { message.append(("webpush", .object(webpush))) }
        var request: [(key: String, value: JSONValue)] = []
        if validateOnly { request.append(("validate_only", .bool(true))) }
        request.append(("message", .object(message)))
        return .object(request)
    }

    /// What the list of scheduled sends shows of this message.
    var summary: String {
        let target = Self.targets.first { $0.0 == form["target"] }?.1 ?? "?"
        let title = value("title")
        return "\(target) \(value("to"))" + (title.isEmpty ? "" : ": \(title)")
    }

    private func customData() throws(ComposerFieldError) -> [(String, String)] {
        var data: [(String, String)] = []
        for line in (form["data"] ?? "").split(whereSeparator: \.isNewline) {
            let pair = line.trimmingCharacters(in: .whitespaces)
            guard !pair.isEmpty else { continue }
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ComposerFieldError("data", "Custom data takes one key=value per line: \(pair)")
            }
            data.append((String(pair[..<equals]), String(pair[pair.index(after: equals)...])))
        }
        return data
    }

    private func androidOptions() throws(ComposerFieldError) -> [(key: String, value: JSONValue)] {
        var android: [(key: String, value: JSONValue)] = []
        if !value("android_priority").isEmpty { android.append(("priority", .string(value("android_priority")))) }
        if let ttl = try seconds("android_ttl") { android.append(("ttl", .string("\(ttl)s"))) }
        if !value("android_collapse_key").isEmpty {
            android.append(("collapse_key", .string(value("android_collapse_key"))))
        }
        let notification = pairs([("android_channel", "channel_id"), ("android_click_action", "click_action")])
        if !notification.isEmpty { android.append(("notification", .stringObject(notification))) }
        return android
    }

    private func appleOptions() throws(ComposerFieldError) -> [(key: String, value: JSONValue)] {
        var apns: [(key: String, value: JSONValue)] = []
        let headers = pairs([("apns_priority", "apns-priority"), ("apns_collapse_id", "apns-collapse-id")])
        if !headers.isEmpty { apns.append(("headers", .stringObject(headers))) }
        var aps: [(key: String, value: JSONValue)] = []
        if !value("apns_badge").isEmpty {
            guard let badge = Int(value("apns_badge")), badge >= 0 else {
                throw ComposerFieldError("apns_badge", "The badge is a whole number, 0 or more.")
            }
            aps.append(("badge", .number(Double(badge))))
        }
        if !value("apns_sound").isEmpty { aps.append(("sound", .string(value("apns_sound")))) }
        if !aps.isEmpty { apns.append(("payload", .object([("aps", .object(aps))]))) }
        return apns
    }

    private func webOptions() throws(ComposerFieldError) -> [(key: String, value: JSONValue)] {
        var webpush: [(key: String, value: JSONValue)] = []
        var headers: [(String, String)] = []
        if let ttl = try seconds("web_ttl") { headers.append(("TTL", String(ttl))) }
        if !value("web_urgency").isEmpty { headers.append(("Urgency", value("web_urgency"))) }
        if !headers.isEmpty { webpush.append(("headers", .stringObject(headers))) }
        if !value("web_link").isEmpty { webpush.append(("fcm_options", .stringObject([("link", value("web_link"))]))) }
        return webpush
    }

    private func seconds(_ field: String) throws(ComposerFieldError) -> Int? {
        guard !value(field).isEmpty else { return nil }
        guard let seconds = Int(value(field)), seconds >= 0 else {
            throw ComposerFieldError(field, "A time to live is a whole number of seconds.")
        }
        return seconds
    }

    /// The form's non-empty values of `fields`, under their message keys.
    private func pairs(_ fields: [(form: String, key: String)]) -> [(String, String)] {
        fields.compactMap { value($0.form).isEmpty ? nil : ($0.key, value($0.form)) }
    }

    func value(_ field: String) -> String {
        (form[field] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
