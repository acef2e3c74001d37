/// The checks FCM makes on a `Message` before it accepts it.
///
/// Input is the schema-normalized JSON (proto field names, durations in whole seconds);
/// output is a `Message` whose body no longer holds the target.
public enum MessageValidator {
    static let targetFields = ["token", "topic", "condition", "fid"]
    static let apnsPushTypes: Set<String> = [
        "alert", "background", "location", "voip", "complication", "fileprovider", "mdm", "liveactivity",
        "pushtotalk", "widgets", "controls",
    ]
    static let webUrgencies: Set<String> = ["very-low", "low", "normal", "high"]

    /// Validates a normalized message and splits off its target.
    public static func validate(_ message: JSONValue, limits: MessageLimits) throws(HeraldError) -> Message {
        let target = try validateTarget(message, limits: limits)
        try validateData(message["data"], path: "message.data")
        try validateImage(message["notification"]?["image"], path: "message.notification.image")
        try validateLabel(message["fcm_options"]?["analytics_label"], path: "message.fcm_options.analytics_label")
        if let android = message["android"] { try validateAndroid(android, limits: limits) }
        if let webpush = message["webpush"] { try validateWebpush(webpush, limits: limits) }
        if let apns = message["apns"] { try validateAPNs(apns) }

        let body = JSONValue.object(
            (message.objectMembers ?? []).filter { !targetFields.contains($0.key) && $0.key != "name" })
        let result = Message(target: target, body: body)
        let size = PayloadSize.largest(of: result)
        let limit = target.isFanout ? limits.maximumTopicPayloadBytes : limits.maximumPayloadBytes
        guard size <= limit else {
            throw HeraldError.invalidField(
                "message",
                "Message payload is \(size) bytes, over the limit of \(limit) bytes"
                    + (target.isFanout ? " for topic messages." : "."),
                legacyName: "MessageTooBig")
        }
        return result
    }

    private static func validateTarget(_ message: JSONValue, limits: MessageLimits) throws(HeraldError)
        -> Message.Target
    {
        let present = targetFields.filter { message[$0] != nil }
        guard present.count == 1, let field = present.first, let value = message[field]?.stringValue else {
            throw HeraldError.invalidField(
                "message",
                present.isEmpty
                    ? "Exactly one of token, topic, condition or fid must be set; none was."
                    : "Exactly one of token, topic, condition or fid must be set; got \(present.joined(separator: ", ")).",
                legacyName: "MissingRegistration")
        }
        switch field {
        case "token":
            guard RegistrationTokenFormat.isWellFormed(value) else {
                throw HeraldError.malformedToken(field: "message.token")
            }
            return .token(value)
        case "fid":
            guard RegistrationTokenFormat.isWellFormedInstallationID(value) else {
                throw HeraldError.invalidField("message.fid", "The installation ID is not valid.")
            }
            return .fid(value)
        case "topic":
            let name = TopicName.stripPrefix(value)
            guard TopicName.isValid(name) else {
                throw HeraldError.invalidField(
                    "message.topic", "Invalid topic name \"\(value)\": use 1 to 900 of [a-zA-Z0-9-_.~%].")
            }
            return .topic(name)
        default:
            let condition: Condition
            do {
                condition = try Condition.parse(value)
            } catch {
                throw HeraldError.invalidField("message.condition", "Invalid condition: \(error.description).")
            }
            let count = condition.topicTerms.count
            guard count <= limits.maximumConditionTopics else {
                throw HeraldError.invalidField(
                    "message.condition",
                    "Invalid condition: it names \(count) topics; at most \(limits.maximumConditionTopics) are allowed."
                )
            }
            return .condition(condition)
        }
    }

    /// SEMANTICS M3: data keys may not be reserved words.
    static func validateData(_ data: JSONValue?, path: String) throws(HeraldError) {
        guard let members = data?.objectMembers else { return }
        for member in members {
            let key = member.key
            let lower = key.lowercased()
            if key.utf8.contains(0) {
                throw HeraldError.invalidField(
                    path, "Invalid data payload key: a key may not contain U+0000.", legacyName: "InvalidDataKey")
            }
            if key.isEmpty || lower == "from" || lower == "notification" || lower == "message_type"
                || lower.hasPrefix("google") || lower.hasPrefix("gcm")
            {
                throw HeraldError.invalidField(
                    path,
                    "Invalid data payload key \"\(key)\": \"from\", \"notification\", \"message_type\" and keys "
                        + "starting with \"google\" or \"gcm\" are reserved.",
                    legacyName: "InvalidDataKey")
            }
        }
    }

    static func validateTTL(_ seconds: Int64, path: String, limits: MessageLimits) throws(HeraldError) {
        guard seconds >= 0, seconds <= limits.maximumTTLSeconds else {
            throw HeraldError.invalidField(
                path, "The time to live must be between 0 and \(limits.maximumTTLSeconds) seconds; got \(seconds).",
                legacyName: "InvalidTtl")
        }
    }

    static func validateLabel(_ label: JSONValue?, path: String) throws(HeraldError) {
        guard let text = label?.stringValue else { return }
        let utf8 = text.utf8
        guard (1...50).contains(utf8.count), TopicName.isValid(text) else {
            throw HeraldError.invalidField(path, "Analytics label must match ^[a-zA-Z0-9-_.~%]{1,50}$.")
        }
    }

    static func validateImage(_ image: JSONValue?, path: String) throws(HeraldError) {
        guard let url = image?.stringValue else { return }
        guard url.hasPrefix("https://") || url.hasPrefix("http://"), url.count > 8, !url.contains(" ") else {
            throw HeraldError.invalidField(path, "The image must be an http or https URL.")
        }
    }

    private static func validateAndroid(_ android: JSONValue, limits: MessageLimits) throws(HeraldError) {
        try validateData(android["data"], path: "message.android.data")
        if let ttl = android["ttl"]?.stringValue.flatMap(ProtoDuration.parseSeconds) {
            try validateTTL(ttl, path: "message.android.ttl", limits: limits)
        }
        try validateLabel(
            android["fcm_options"]?["analytics_label"], path: "message.android.fcm_options.analytics_label")
        if let package = android["restricted_package_name"]?.stringValue, !package.isEmpty {
            let valid = package.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
                !part.isEmpty && part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
            }
            guard valid else {
                throw HeraldError.invalidField(
                    "message.android.restricted_package_name", "Invalid package name \"\(package)\".",
                    legacyName: "InvalidPackageName")
            }
        }
        guard let notification = android["notification"] else { return }
        let path = "message.android.notification"
        if let color = notification["color"]?.stringValue, !isHexColor(color, digits: [6]) {
            throw HeraldError.invalidField("\(path).color", "Color must be in the form #RRGGBB; got \"\(color)\".")
        }
        try validateImage(notification["image"], path: "\(path).image")
        for (args, key) in [("body_loc_args", "body_loc_key"), ("title_loc_args", "title_loc_key")] {
            if let list = notification[args]?.arrayElements, !list.isEmpty, notification[key] == nil {
                throw HeraldError.invalidField("\(path).\(key)", "\(key) is required when \(args) is set.")
            }
        }
        if let count = notification["notification_count"]?.numberValue, count < 0 {
            throw HeraldError.invalidField("\(path).notification_count", "notification_count must not be negative.")
        }
        for (index, timing) in (notification["vibrate_timings"]?.arrayElements ?? []).enumerated() {
            if let seconds = timing.stringValue.flatMap(ProtoDuration.parseSeconds), seconds < 0 {
                throw HeraldError.invalidField(
                    "\(path).vibrate_timings[\(index)]", "Vibrate timings must not be negative.")
            }
        }
        if let light = notification["light_settings"] {
            for field in ["color", "light_on_duration", "light_off_duration"] where light[field] == nil {
                throw HeraldError.invalidField("\(path).light_settings.\(field)", "\(field) is required.")
            }
            for component in ["red", "green", "blue", "alpha"] {
                if let value = light["color"]?[component]?.numberValue, !(0...1).contains(value) {
                    throw HeraldError.invalidField(
                        "\(path).light_settings.color.\(component)", "Color components must be between 0 and 1.")
                }
            }
            for field in ["light_on_duration", "light_off_duration"] {
                if let seconds = light[field]?.stringValue.flatMap(ProtoDuration.parseSeconds), seconds < 0 {
                    throw HeraldError.invalidField(
                        "\(path).light_settings.\(field)", "\(field) must not be negative.")
                }
            }
        }
    }

    private static func validateWebpush(_ webpush: JSONValue, limits: MessageLimits) throws(HeraldError) {
        try validateData(webpush["data"], path: "message.webpush.data")
        let headers = HeaderMap(webpush["headers"])
        if let ttl = headers["ttl"] {
            guard let seconds = Int64(ttl) else {
                throw HeraldError.invalidField(
                    "message.webpush.headers", "The TTL header must be a whole number of seconds; got \"\(ttl)\".",
                    legacyName: "InvalidTtl")
            }
            try validateTTL(seconds, path: "message.webpush.headers", limits: limits)
        }
        if let urgency = headers["urgency"], !webUrgencies.contains(urgency) {
            throw HeraldError.invalidField(
                "message.webpush.headers", "The Urgency header must be very-low, low, normal or high.")
        }
        if let topic = headers["topic"] {
            guard (1...32).contains(topic.utf8.count),
                topic.utf8.allSatisfy({ Base64URL.isAlphabet($0) })
            else {
                throw HeraldError.invalidField(
                    "message.webpush.headers", "The Topic header must be 1 to 32 URL-safe base64 characters.")
            }
        }
        if let link = webpush["fcm_options"]?["link"]?.stringValue, !link.hasPrefix("https://") {
            throw HeraldError.invalidField("message.webpush.fcm_options.link", "The link must be an https URL.")
        }
        try validateLabel(
            webpush["fcm_options"]?["analytics_label"], path: "message.webpush.fcm_options.analytics_label")
    }

    private static func validateAPNs(_ apns: JSONValue) throws(HeraldError) {
        let headers = HeaderMap(apns["headers"])
        if let priority = headers["apns-priority"], !["1", "5", "10"].contains(priority) {
            throw HeraldError.invalidField("message.apns.headers", "apns-priority must be 1, 5 or 10.")
        }
        if let expiration = headers["apns-expiration"], Int64(expiration).map({ $0 >= 0 }) != true {
            throw HeraldError.invalidField(
                "message.apns.headers", "apns-expiration must be a UNIX epoch time in seconds.",
                legacyName: "InvalidTtl")
        }
        if let collapseID = headers["apns-collapse-id"], collapseID.utf8.count > 64 {
            throw HeraldError.invalidField(
                "message.apns.headers", "apns-collapse-id must be at most 64 bytes.")
        }
        if let pushType = headers["apns-push-type"], !apnsPushTypes.contains(pushType) {
            throw HeraldError.invalidField("message.apns.headers", "Unknown apns-push-type \"\(pushType)\".")
        }
        try validateLabel(apns["fcm_options"]?["analytics_label"], path: "message.apns.fcm_options.analytics_label")
        try validateImage(apns["fcm_options"]?["image"], path: "message.apns.fcm_options.image")
        guard let aps = apns["payload"]?["aps"] else { return }
        guard case .object = aps else {
            throw HeraldError.invalidField("message.apns.payload.aps", "aps must be a dictionary.")
        }
        if let alert = aps["alert"], case .object = alert {
            for (args, key) in [("loc-args", "loc-key"), ("title-loc-args", "title-loc-key")] {
                if let list = alert[args]?.arrayElements, !list.isEmpty, alert[key] == nil {
                    throw HeraldError.invalidField(
                        "message.apns.payload.aps.alert", "\(key) is required when \(args) is set.")
                }
            }
        }
    }

    static func isHexColor(_ text: String, digits: Set<Int>) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.first == UInt8(ascii: "#"), digits.contains(utf8.count - 1) else { return false }
        return utf8.dropFirst().allSatisfy { byte in
            (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
        }
    }
}

/// A header map read case-insensitively, as HTTP headers are.
public struct HeaderMap: Sendable {
    private var values: [String: String] = [:]

    public init(_ headers: JSONValue?) {
        for member in headers?.objectMembers ?? [] {
            if let value = member.value.stringValue { values[member.key.lowercased()] = value }
        }
    }

    public subscript(name: String) -> String? { values[name] }
}
