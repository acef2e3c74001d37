import HeraldCore
import HeraldDelivery

/// The values the composer's page renders: the form as it was filled in, an error beside
/// the field it is about, what was sent or scheduled, and the platforms' previews.
struct ComposerPage {
    var form: [String: String] = [:]
    var errors: [String: String] = [:]
    var alert: String?
    var status: String?
    /// A page to see more of what was done on, and its link's text.
    var statusLink: (href: String, label: String)?
    var previews: [DeliveryPreview] = []

    static let choices: [String: [(value: String, label: String)]] = [
        "target": ConsoleComposition.targets.map { ($0.0, $0.1) },
        "android_priority": [("", "Default (normal)"), ("NORMAL", "Normal"), ("HIGH", "High")],
        "apns_priority": [("", "Default"), ("5", "5 (when power allows)"), ("10", "10 (now)")],
        "web_urgency": [
            ("", "Default (normal)"), ("very-low", "Very low"), ("low", "Low"), ("normal", "Normal"), ("high", "High"),
        ],
    ]

    mutating func fail(_ error: ComposerFieldError) {
        if let field = error.field { errors[field] = error.message } else { alert = error.message }
    }

    func values(_ base: [String: Any]) -> [String: Any] {
        var values = base
        values["form"] = form
        values["errors"] = errors
        values["alert"] = alert as Any
        values["status"] = status as Any
        values["statusLink"] = statusLink?.href as Any
        values["statusLinkLabel"] = statusLink?.label as Any
        for (field, options) in Self.choices {
            values[field + "_options"] = options.map {
                ["value": $0.value, "label": $0.label, "selected": (form[field] ?? "") == $0.value] as [String: Any]
            }
        }
        values["hasPreviews"] = !previews.isEmpty
        values["previews"] = previews.map { preview -> [String: Any] in
            [
                "platform": ["android": "Android", "apple": "Apple", "web": "Web"][preview.platform.rawValue] ?? "",
                "ttl": String(preview.options.ttlSeconds),
                "priority": preview.options.isHighPriority ? "high" : "normal",
                "collapse": preview.options.collapseKey ?? "none (every message is kept)",
                "payload": preview.payload.indented,
            ]
        }
        return values
    }
}
