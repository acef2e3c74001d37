/// The options and payload of a legacy send, written as the members of a v1 message. A
/// legacy option holds for every platform (SEMANTICS P2): the collapse key, priority and
/// time to live go to Android, APNs and Web Push headers alike, wherever the platform's
/// own rules let them.
struct LegacyOptions {
    var collapseKey: String?
    /// True for `high`, false for `normal`.
    var priority: Bool?
    var contentAvailable = false
    var mutableContent = false
    var restrictedPackageName: String?
    var data: [(String, String)] = []
    var notification = LegacyNotification()

    func v1Members(timeToLive: Int64?) -> [(key: String, value: JSONValue)] {
        let ttl = timeToLive.flatMap { (0...LegacySendRequest.maximumTimeToLive).contains($0) ? $0 : nil }
        var members: [(key: String, value: JSONValue)] = []
        if !data.isEmpty { members.append(("data", .object(data.map { ($0.0, .string($0.1)) }))) }
        if !notification.common.isEmpty { members.append(("notification", .object(notification.common))) }
        let android = androidMembers(ttl: ttl)
        if !android.isEmpty { members.append(("android", .object(android))) }
        let apns = apnsMembers()
        if !apns.isEmpty { members.append(("apns", .object(apns))) }
        let webpush = webpushHeaders(ttl: ttl)
        if !webpush.isEmpty { members.append(("webpush", .object([("headers", .object(webpush))]))) }
        return members
    }

    private func androidMembers(ttl: Int64?) -> [(key: String, value: JSONValue)] {
        var android: [(key: String, value: JSONValue)] = []
        if let collapseKey { android.append(("collapse_key", .string(collapseKey))) }
        if let priority { android.append(("priority", .string(priority ? "HIGH" : "NORMAL"))) }
        if let ttl { android.append(("ttl", .string("\(ttl)s"))) }
        if let restrictedPackageName { android.append(("restricted_package_name", .string(restrictedPackageName))) }
        if !notification.android.isEmpty { android.append(("notification", .object(notification.android))) }
        return android
    }

    private func apnsMembers() -> [(key: String, value: JSONValue)] {
        var headers: [(key: String, value: JSONValue)] = []
        if let priority { headers.append(("apns-priority", .string(priority ? "10" : "5"))) }
        if let collapseKey, collapseKey.utf8.count <= 64 { headers.append(("apns-collapse-id", .string(collapseKey))) }
        var aps: [(key: String, value: JSONValue)] = []
        if contentAvailable { aps.append(("content-available", .number(1))) }
        if mutableContent { aps.append(("mutable-content", .number(1))) }
        if let badge = notification.badge { aps.append(("badge", .number(Double(badge)))) }
        if let sound = notification.sound { aps.append(("sound", .string(sound))) }
        if let subtitle = notification.subtitle { aps.append(("alert", .object([("subtitle", .string(subtitle))]))) }
        var apns: [(key: String, value: JSONValue)] = []
        if !headers.isEmpty { apns.append(("headers", .object(headers))) }
        if !aps.isEmpty { apns.append(("payload", .object([("aps", .object(aps))]))) }
        return apns
    }

    private func webpushHeaders(ttl: Int64?) -> [(key: String, value: JSONValue)] {
        var headers: [(key: String, value: JSONValue)] = []
        if let ttl { headers.append(("TTL", .string("\(ttl)"))) }
        if let priority { headers.append(("Urgency", .string(priority ? "high" : "normal"))) }
        if let collapseKey, (1...32).contains(collapseKey.utf8.count),
            collapseKey.utf8.allSatisfy({ Base64URL.isAlphabet($0) })
        {
            headers.append(("Topic", .string(collapseKey)))
        }
        return headers
    }

}
