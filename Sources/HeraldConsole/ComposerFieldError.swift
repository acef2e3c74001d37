import HeraldCore

/// Why the composer cannot send what its form says, and the form field to show it beside
/// (nil: above the form).
struct ComposerFieldError: Error {
    var field: String?
    var message: String

    init(_ field: String?, _ message: String) {
        self.field = field
        self.message = message
    }

    /// The form field a send's error is about, from the message field it names.
    /// `target` is the field that held the message's target: `to`, or `test_token` for a test.
    init(_ error: HeraldError, target: String) {
        message = error.message
        let path = error.fieldViolations.first?.field ?? ""
        if error.fcmCode == .unregistered || error.canonicalStatus.httpStatus == 404 {
            field = target
            message = "No app instance has this token, or it was deleted."
            return
        }
        let headers: [(String, String)] = [
            ("apns-priority", "apns_priority"), ("apns-collapse-id", "apns_collapse_id"), ("TTL", "web_ttl"),
            ("Urgency", "web_urgency"),
        ]
        if path.hasSuffix(".headers") {
            field = headers.first { error.message.contains($0.0) }?.1
            return
        }
        let fields: [(String, String)] = [
            ("message.token", target), ("message.topic", target), ("message.condition", target),
            ("message.notification.title", "title"), ("message.notification.body", "body"),
            ("message.notification.image", "image"), ("message.data", "data"),
            ("message.fcm_options.analytics_label", "analytics_label"),
            ("message.android.priority", "android_priority"), ("message.android.ttl", "android_ttl"),
            ("message.android.collapse_key", "android_collapse_key"),
            ("message.android.notification.channel_id", "android_channel"),
            ("message.android.notification.click_action", "android_click_action"),
            ("message.apns.payload.aps.badge", "apns_badge"), ("message.apns.payload.aps.sound", "apns_sound"),
            ("message.webpush.fcm_options.link", "web_link"),
        ]
        field = fields.first { path == $0.0 || path.hasPrefix($0.0 + ".") }?.1
    }
}
