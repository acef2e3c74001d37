/// A description of a JSON request body, field by field, as the v1 API's protobuf
/// schema defines it.
///
/// Normalizing a request against its schema accepts both proto names (`collapse_key`)
/// and lowerCamelCase (`collapseKey`), enum values in any case, and numbers sent as
/// strings where protobuf JSON allows them; it rejects unknown fields by name.
public indirect enum FieldType: Sendable {
    case string
    case bool
    case int32
    case number
    /// A `google.protobuf.Duration` string such as `"3.5s"`, normalized to whole seconds.
    case duration
    /// A `google.protobuf.Timestamp` in RFC 3339 form.
    case timestamp
    /// A protobuf enum: the type name (for error messages) and its value names.
    case enumeration(String, [String])
    /// A `map<string, string>`.
    case stringMap
    case object(ObjectSchema)
    case array(FieldType)
    /// A free-form JSON object (`google.protobuf.Struct`).
    case freeform
}

/// The fields of one JSON object, by their proto (snake_case) names.
public struct ObjectSchema: Sendable {
    /// Field types by proto name.
    public let fields: [String: FieldType]

    public init(_ fields: [String: FieldType]) {
        self.fields = fields
    }
}

extension ObjectSchema {
    /// The v1 `Message`, with every field of `AndroidConfig`, `WebpushConfig` and `ApnsConfig`.
    public static let message: ObjectSchema = {
        let analytics = ObjectSchema(["analytics_label": .string])
        let color = ObjectSchema(["red": .number, "green": .number, "blue": .number, "alpha": .number])
        let lightSettings = ObjectSchema([
            "color": .object(color), "light_on_duration": .duration, "light_off_duration": .duration,
        ])
        let androidNotification = ObjectSchema([
            "title": .string, "body": .string, "icon": .string, "color": .string, "sound": .string,
            "tag": .string, "click_action": .string, "body_loc_key": .string, "body_loc_args": .array(.string),
            "title_loc_key": .string, "title_loc_args": .array(.string), "channel_id": .string,
            "ticker": .string, "sticky": .bool, "event_time": .timestamp, "local_only": .bool,
            "notification_priority": .enumeration(
                "google.firebase.fcm.v1.AndroidNotification.NotificationPriority",
                [
                    "PRIORITY_UNSPECIFIED", "PRIORITY_MIN", "PRIORITY_LOW", "PRIORITY_DEFAULT", "PRIORITY_HIGH",
                    "PRIORITY_MAX",
                ]),
            "default_sound": .bool, "default_vibrate_timings": .bool, "default_light_settings": .bool,
            "vibrate_timings": .array(.duration),
            "visibility": .enumeration(
                "google.firebase.fcm.v1.AndroidNotification.Visibility",
                ["VISIBILITY_UNSPECIFIED", "PRIVATE", "PUBLIC", "SECRET"]),
            "notification_count": .int32, "light_settings": .object(lightSettings), "image": .string,
            "proxy": .enumeration(
                "google.firebase.fcm.v1.AndroidNotification.Proxy",
                ["PROXY_UNSPECIFIED", "ALLOW", "DENY", "IF_PRIORITY_LOWERED"]),
            "bypass_proxy_notification": .bool,
        ])
        let android = ObjectSchema([
            "collapse_key": .string,
            "priority": .enumeration("google.firebase.fcm.v1.AndroidMessagePriority", ["NORMAL", "HIGH"]),
            "ttl": .duration, "restricted_package_name": .string, "data": .stringMap,
            "notification": .object(androidNotification), "fcm_options": .object(analytics),
            "direct_boot_ok": .bool, "bandwidth_constrained_ok": .bool, "restricted_satellite_ok": .bool,
        ])
        let webpush = ObjectSchema([
            "headers": .stringMap, "data": .stringMap, "notification": .freeform,
            "fcm_options": .object(ObjectSchema(["link": .string, "analytics_label": .string])),
        ])
        let apns = ObjectSchema([
            "headers": .stringMap, "payload": .freeform,
            "fcm_options": .object(ObjectSchema(["analytics_label": .string, "image": .string])),
            "live_activity_token": .string,
        ])
        return ObjectSchema([
            "name": .string, "token": .string, "topic": .string, "condition": .string, "fid": .string,
            "data": .stringMap,
            "notification": .object(ObjectSchema(["title": .string, "body": .string, "image": .string])),
            "android": .object(android), "webpush": .object(webpush), "apns": .object(apns),
            "fcm_options": .object(analytics),
        ])
    }()

    /// The v1 `SendMessageRequest` body.
    public static let sendMessageRequest = ObjectSchema([
        "message": .object(.message), "validate_only": .bool,
    ])
}
