/// A legacy `notification` object sorted by where its keys live in a v1 message: the common
/// notification, the Android notification, or the APNs `aps` dictionary.
struct LegacyNotification {
    var common: [(key: String, value: JSONValue)] = []
    var android: [(key: String, value: JSONValue)] = []
    var badge: Int?
    var subtitle: String?
    var sound: String?

    /// Legacy keys that name the same thing under another v1 name.
    private static let androidNames = ["android_channel_id": "channel_id"]
    private static let androidKeys: Set<String> = [
        "icon", "sound", "tag", "color", "click_action", "body_loc_key", "body_loc_args", "title_loc_key",
        "title_loc_args", "android_channel_id",
    ]

    var isEmpty: Bool { common.isEmpty && android.isEmpty && badge == nil && subtitle == nil }

    /// Files one key; keys the legacy reference does not list are left out.
    mutating func set(_ key: String, to value: JSONValue) {
        switch key {
        case "title", "body", "image":
            common.append((key, value))
        case "subtitle":
            subtitle = value.stringValue
        case _ where Self.androidKeys.contains(key):
            android.append((Self.androidNames[key] ?? key, value))
            if key == "sound" { sound = value.stringValue }
        default:
            break
        }
    }
}
