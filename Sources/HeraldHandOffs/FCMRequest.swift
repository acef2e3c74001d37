public import HeraldCore
import HeraldProtocol
public import HeraldStorage

/// The `messages:send` request that hands one queue entry to FCM (SEMANTICS R3): the
/// message as its sender wrote it (`android`, `apns`, `webpush`, `fcm_options` and all),
/// sent to the entry's token (or, for a topic or condition send handed to Google's, to the
/// message's own topic or condition: SEMANTICS R7), its Android time to live what is left.
public struct FCMRequest: Sendable, Equatable {
    /// The request body, `{"message": {…}}`.
    public var body: [UInt8]

    /// Why an entry cannot be handed to FCM.
    public struct Unusable: Error, Sendable, Equatable {}

    /// What a stanza tailored for the hand-off gives every request made from it: the
    /// message's members and whether its time to live was 0. A fanout's entries share one
    /// stanza, read once.
    public struct Template: Sendable, Equatable {
        var members: [(key: String, value: JSONValue)]
        var isNowOrNever: Bool
        var keepsTarget: Bool

        public init(stanza: [UInt8]) throws(Unusable) {
            guard let stanza = try? McsProto_DataMessageStanza(serializedBytes: stanza),
                stanza.appData.contains(where: { $0.key == "content-type" && $0.value == "application/fcm+json" }),
                let members = (try? JSONParser.parse(Array(stanza.rawData)))?.objectMembers
            else { throw Unusable() }
            // A stanza names a target only for Google's topics; any other goes to the entry's token.
            keepsTarget = members.contains { $0.key == "topic" || $0.key == "condition" }
            self.members = keepsTarget ? members : members.filter { !Self.targets.contains($0.key) }
            isNowOrNever = stanza.ttl == 0
        }

        /// The message's target fields, which the entry's token replaces.
        static let targets: Set<String> = ["token", "topic", "condition", "fid"]

        public static func == (lhs: Template, rhs: Template) -> Bool {
            JSONValue.object(lhs.members) == JSONValue.object(rhs.members) && lhs.isNowOrNever == rhs.isNowOrNever
        }
    }

    /// The request for `entry` from its stanza's `template`, handed off at `now`.
    public init(_ entry: QueuedMessage, template: Template, now: Timestamp) {
        let left = template.isNowOrNever ? 0 : max(0, (entry.expiresAt.milliseconds - now.milliseconds) / 1000)
        var members = template.members
        var android = members.first { $0.key == "android" }?.value.objectMembers ?? []
        android.removeAll { $0.key == "ttl" }
        android.append((key: "ttl", value: .string("\(left)s")))
        members.removeAll { $0.key == "android" }
        members.append((key: "android", value: .object(android)))
        if !template.keepsTarget { members.append((key: "token", value: .string(entry.token))) }
        body = JSONValue.object([(key: "message", value: .object(members))]).renderedBytes
    }
}
