/// A legacy HTTP send (`POST /fcm/send`), read from its JSON body or its plain-text form and
/// written as the v1 message it means, so that a legacy send obeys every rule a v1 send does.
///
/// What does not parse is `Malformed` (HTTP 400 with a plain-text reason). What parses but
/// breaks a message rule (a reserved data key, a time to live out of range, a payload too
/// big) fails each target alike when `message(to:limits:)` makes its v1 message, and is
/// answered in the results as the legacy protocol names it.
public struct LegacySendRequest: Sendable, Equatable {
    /// Who the message is for.
    public enum Audience: Sendable, Equatable {
        /// Registration tokens or device-group keys, each answered with a result of its own.
        case registrations([String])
        /// `to: "/topics/NAME"`.
        case topic(String)
        case condition(String)
        /// No target at all: answered with one `MissingRegistration` result.
        case missing
    }

    /// A body that is not a legacy send, with the reason the 400 answer gives.
    public struct Malformed: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// The most tokens `registration_ids` may hold.
    public static let maximumRegistrationIDs = 1000
    /// The largest `time_to_live`: four weeks.
    public static let maximumTimeToLive: Int64 = 2_419_200

    public var audience: Audience
    /// The v1 message members the legacy options and payload map to, without a target.
    public var members: [(key: String, value: JSONValue)]
    public var dryRun: Bool
    /// `time_to_live` as given, checked when a message is made (`InvalidTtl`).
    public var timeToLive: Int64?

    public static func == (lhs: LegacySendRequest, rhs: LegacySendRequest) -> Bool {
        lhs.audience == rhs.audience && JSONValue.object(lhs.members) == JSONValue.object(rhs.members)
            && lhs.dryRun == rhs.dryRun && lhs.timeToLive == rhs.timeToLive
    }

    /// A well-formed token that stands for every token of a request while its message is
    /// validated once.
    public static let placeholderToken = "APA91b0"

    /// Reads a JSON body (reference §5.1).
    public static func decode(json bytes: some Collection<UInt8>) throws(Malformed) -> LegacySendRequest {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes)
        } catch {
            throw Malformed(description: "JSON_PARSING_ERROR: \(error.description).")
        }
        return try decode(document: document)
    }

    /// Reads a parsed JSON body.
    public static func decode(document: JSONValue) throws(Malformed) -> LegacySendRequest {
        guard case .object = document else { throw Malformed(description: "The body must be a JSON object.") }
        let fields = LegacyFields(document)
        let audience = try readAudience(fields)
        var options = LegacyOptions()
        options.collapseKey = try fields.string("collapse_key")
        options.priority = try readPriority(fields.value("priority"))
        options.contentAvailable = try fields.bool("content_available") ?? false
        options.mutableContent = try fields.bool("mutable_content") ?? false
        options.restrictedPackageName = try fields.string("restricted_package_name")
        _ = try fields.bool("delay_while_idle")  // deprecated, no effect
        let timeToLive = try fields.integer("time_to_live")
        let dryRun = try fields.bool("dry_run") ?? false
        if let data = fields.value("data") {
            guard let members = data.objectMembers else {
                throw Malformed(description: "Field \"data\" must be a JSON object.")
            }
            options.data = members.map { ($0.key, $0.value.stringValue ?? $0.value.rendered) }
        }
        if let notification = fields.value("notification") {
            guard let members = notification.objectMembers else {
                throw Malformed(description: "Field \"notification\" must be a JSON object.")
            }
            options.notification = try readNotification(members)
        }
        return LegacySendRequest(
            audience: audience, members: options.v1Members(timeToLive: timeToLive), dryRun: dryRun,
            timeToLive: timeToLive)
    }

    /// Reads the plain-text form: `registration_id`, the options, and `data.<key>` fields.
    public static func decode(form: [String: String]) throws(Malformed) -> LegacySendRequest {
        var options = LegacyOptions()
        options.collapseKey = form["collapse_key"]
        options.priority = try readPriority(form["priority"].map(JSONValue.string))
        options.restrictedPackageName = form["restricted_package_name"]
        options.data = form.filter { $0.key.hasPrefix("data.") }.map { (String($0.key.dropFirst(5)), $0.value) }
            .sorted { $0.0 < $1.0 }
        var timeToLive: Int64?
        if let text = form["time_to_live"] {
            guard let value = Int64(text) else {
                throw Malformed(description: "time_to_live must be a number: \(text)")
            }
            timeToLive = value
        }
        let audience: Audience = form["registration_id"].map { .registrations([$0]) } ?? .missing
        return LegacySendRequest(
            audience: audience, members: options.v1Members(timeToLive: timeToLive),
            dryRun: ["1", "true"].contains(form["dry_run"] ?? ""), timeToLive: timeToLive)
    }

    /// The v1 message to one target (`token`, `topic` or `condition`), validated as a v1
    /// send is; a broken rule throws the error whose `legacyResult` the answer gives.
    public func message(to target: (field: String, value: String), limits: MessageLimits) throws(HeraldError)
        -> Message
    {
        if let timeToLive, !(0...Self.maximumTimeToLive).contains(timeToLive) {
            throw HeraldError.invalidField(
                "time_to_live", "time_to_live must be 0 to \(Self.maximumTimeToLive) seconds.", legacyName: "InvalidTtl"
            )
        }
        let message = JSONValue.object([(key: target.field, value: .string(target.value))] + members)
        return try SendRequest.decode(document: .object([(key: "message", value: message)]), limits: limits).message
    }

    private static func readAudience(_ fields: LegacyFields) throws(Malformed) -> Audience {
        if let ids = fields.value("registration_ids") {
            guard let elements = ids.arrayElements else {
                throw Malformed(description: "Field \"registration_ids\" must be a JSON array.")
            }
            let tokens = elements.compactMap(\.stringValue)
            guard tokens.count == elements.count else {
                throw Malformed(description: "Field \"registration_ids\" must hold strings.")
            }
            guard !tokens.isEmpty else { throw Malformed(description: "\"registration_ids\" field cannot be empty") }
            guard tokens.count <= maximumRegistrationIDs else {
                throw Malformed(
                    description:
                        "Number of messages on bulk (\(tokens.count)) exceeds maximum allowed (\(maximumRegistrationIDs))"
                )
            }
            return .registrations(tokens)
        }
        if let condition = try fields.string("condition") { return .condition(condition) }
        var to = try fields.string("to")
        if to == nil { to = try fields.string("notification_key") }
        if let to {
            if to.hasPrefix("/topics/") { return .topic(String(to.dropFirst("/topics/".count))) }
            return .registrations([to])
        }
        return .missing
    }

    private static func readPriority(_ value: JSONValue?) throws(Malformed) -> Bool? {
        switch value {
        case nil: return nil
        case .string("high"), .number(10): return true
        case .string("normal"), .number(5): return false
        case let other?: throw Malformed(description: "Invalid priority \(other.rendered): use \"high\" or \"normal\".")
        }
    }

    private static func readNotification(_ members: [(key: String, value: JSONValue)]) throws(Malformed)
        -> LegacyNotification
    {
        var notification = LegacyNotification()
        for (key, value) in members {
            if key == "badge" {
                // Finite and within the integers a double holds exactly ("1e300" and "nan" are not).
                guard let number = value.numberValue ?? value.stringValue.flatMap(Double.init), number.isFinite,
                    abs(number) < 1e15
                else {
                    throw Malformed(description: "Field \"notification.badge\" must be a number.")
                }
                notification.badge = Int(number)
            } else if key.hasSuffix("_loc_args") {
                notification.set(key, to: .array(try locArgs(value, key: key)))
            } else if let text = value.stringValue {
                notification.set(key, to: .string(text))
            } else {
                throw Malformed(description: "Field \"notification.\(key)\" must be a string.")
            }
        }
        return notification
    }

    /// Localisation arguments: a JSON array, or a string holding one.
    private static func locArgs(_ value: JSONValue, key: String) throws(Malformed) -> [JSONValue] {
        var value = value
        if let text = value.stringValue, let parsed = try? JSONParser.parse(Array(text.utf8)) { value = parsed }
        guard let elements = value.arrayElements else {
            throw Malformed(description: "Field \"notification.\(key)\" must be a JSON array.")
        }
        return elements.map { .string($0.stringValue ?? $0.rendered) }
    }
}
