public import HeraldCore

/// What a `register3` form asks for: a new token, a topic subscription of an existing
/// token, or the deletion of registrations. Parsing decides everything a request's fields
/// decide; the endpoint only reads and writes the store.
public enum Register3Request: Sendable, Equatable {
    /// A new token for `app` on the device: an app token of the project numbered `sender`,
    /// or (any other sender, a VAPID key) a web push channel.
    case register(Registering)
    /// `X-gcm.topic=/topics/NAME` with `sender=<token>`: subscribe that token to the topic,
    /// or with `delete` unsubscribe it. The token stays.
    case topic(TopicChange)
    /// `delete=true`: the device's registrations of `app` that match.
    case unregister(Unregistering)

    public struct Registering: Sendable, Equatable {
        public var app: String
        public var sender: String
        public var subtype: String?
        public var platform: Platform
        /// `X-appid` and `X-Goog-Firebase-Installations-Auth`, which link the token to an installation.
        public var installationID: String?
        public var installationAuth: String?
        /// The APNs token an older Firebase iOS SDK attaches (`apns_token=p_<hex>` or
        /// `s_<hex>`): the app instance is reached through APNs (SEMANTICS A1).
        public var apns: APNsAddress?
    }

    public struct TopicChange: Sendable, Equatable {
        public var app: String
        public var token: String
        public var topic: String
        public var subscribing: Bool
    }

    public struct Unregistering: Sendable, Equatable {
        public var app: String
        /// The registration's `X-subtype` (a web push subscription's `wp:<origin>#<id>`); nil matches any.
        public var subtype: String?
        /// The registration's sender; nil (`*` or absent) matches any.
        public var sender: String?
        /// One token to delete (Herald's own clients name it); nil matches any.
        public var token: String?
        /// An Instance ID request (`appid` present) expects `token=…`; a GCM one `deleted=<app id>`.
        public var instanceID: String?

        /// Whether a registration of the requesting device is one this request deletes.
        public func matches(_ registration: Registration) -> Bool {
            registration.appID == app && (subtype == nil || registration.subtype == subtype)
                && (sender == nil || registration.sender == sender) && (token == nil || registration.token == token)
        }

        /// The answer's body on success, in the form the requesting client parses.
        public var answer: String {
            if let instanceID { return "token=\(instanceID)" }
            return "deleted=\(subtype ?? app)"
        }
    }

    /// Why a form is refused: its `Error=` code.
    public struct Refusal: Error, Sendable, Equatable {
        public var code: String
    }

    /// The longest value a field may have, by field; a field not named here may have `defaultLimit`.
    static let fieldLimits: [String: Int] = [
        "app": 255, "sender": 4096, "X-subtype": 512, "appid": 255, "X-appid": 200,
        "X-Goog-Firebase-Installations-Auth": 2048, "X-gcm.topic": 920, "X-scope": 920, "apns_token": 210,
    ]
    static let defaultLimit = 255

    /// Whether every field is within its length and uses printable ASCII only (what FCM's
    /// clients send), and `app` is a package name or bundle id.
    static func isBounded(_ form: [String: String]) -> Bool {
        for (name, value) in form {
            guard value.utf8.count <= fieldLimits[name, default: defaultLimit],
                value.utf8.allSatisfy({ (0x20...0x7E).contains($0) })
            else { return false }
        }
        return form["app"].map { app in
            app.utf8.allSatisfy { Base64URL.isAlphabet($0) || $0 == UInt8(ascii: ".") }
        } ?? true
    }

    /// Reads a form already decoded into fields; `androidID` is the device the request authenticated as.
    public static func parse(_ form: [String: String], androidID: UInt64) throws(Refusal) -> Register3Request {
        let invalid = Refusal(code: "INVALID_PARAMETERS")
        guard isBounded(form), let app = nonEmpty(form["app"]) else { throw invalid }
        if let device = form["device"], UInt64(device) != androidID { throw invalid }
        let deleting = form["delete"] == "true" || form["delete"] == "1"
        if let topicPath = nonEmpty(form["X-gcm.topic"]) {
            guard let token = nonEmpty(form["sender"]), RegistrationTokenFormat.isWellFormed(token) else {
                throw invalid
            }
            let topic = TopicName.stripPrefix(topicPath)
            guard topicPath.hasPrefix("/topics/"), TopicName.isValid(topic) else {
                throw Refusal(code: "INVALID_TOPIC")
            }
            return .topic(TopicChange(app: app, token: token, topic: topic, subscribing: !deleting))
        }
        let subtype = nonEmpty(form["X-subtype"])
        if deleting {
            let sender = nonEmpty(form["sender"]).flatMap { $0 == "*" ? nil : $0 }
            return .unregister(
                Unregistering(
                    app: app, subtype: subtype, sender: sender, token: nonEmpty(form["token"]),
                    instanceID: nonEmpty(form["appid"])))
        }
        guard let sender = nonEmpty(form["sender"]) else { throw invalid }
        var apns: APNsAddress?
        if let tuple = nonEmpty(form["apns_token"]) {
            guard let address = APNsAddress(tuple: tuple), Int64(sender) != nil else { throw invalid }
            apns = address
        }
        let platform = apns != nil ? .apple : form["X-platform"].flatMap(Platform.init(rawValue:)) ?? .android
        if Int64(sender) != nil {
            guard platform != .web else { throw invalid }
        } else {
            guard subtype != nil else { throw invalid }
        }
        return .register(
            Registering(
                app: app, sender: sender, subtype: subtype, platform: Int64(sender) != nil ? platform : .web,
                installationID: nonEmpty(form["X-appid"]) ?? (apns != nil ? nonEmpty(form["appid"]) : nil),
                installationAuth: nonEmpty(form["X-Goog-Firebase-Installations-Auth"]), apns: apns))
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}
