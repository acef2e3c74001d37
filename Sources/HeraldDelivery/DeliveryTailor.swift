public import HeraldCore
public import HeraldProtocol

/// Turns a message into the `DataMessageStanza` one registration receives, tailored for
/// its platform (SEMANTICS P1): Android-style registrations get the data map and
/// `gcm.notification.*` keys in `app_data`; web registrations get FCM's JSON payload,
/// encrypted with Web Push in `raw_data`.
public enum DeliveryTailor {
    /// What a tailored delivery needs besides the message.
    public struct Context: Sendable {
        public var messageID: String
        public var registration: Registration
        public var project: Project
        public var sentAt: Timestamp
        public var ttlSeconds: Int64

        public init(
            messageID: String, registration: Registration, project: Project, sentAt: Timestamp, ttlSeconds: Int64
        ) {
            self.messageID = messageID
            self.registration = registration
            self.project = project
            self.sentAt = sentAt
            self.ttlSeconds = ttlSeconds
        }
    }

    /// Notification fields of `AndroidNotification` and the `gcm.notification.*` keys they travel as.
    static let androidNotificationKeys: [String: String] = ["channel_id": "android_channel_id"]

    /// The stanza for one registration.
    public static func stanza(for message: Message, _ context: Context) throws(WebPushEncryption.Failure)
        -> McsProto_DataMessageStanza
    {
        let registration = context.registration
        var stanza = McsProto_DataMessageStanza()
        stanza.id = context.messageID
        stanza.from = registration.sender
        stanza.category = registration.appID
        stanza.sent = context.sentAt.seconds
        stanza.ttl = Int32(clamping: context.ttlSeconds)
        if let collapseKey = collapseKey(of: message) { stanza.token = collapseKey }
        switch registration.platform {
        case .web:
            try sealWebPayload(message, context, into: &stanza)
        case .android, .apple:
            stanza.appData = androidAppData(message, context)
        }
        return stanza
    }

    static func collapseKey(of message: Message) -> String? {
        message.body["android"]?["collapse_key"]?.stringValue
    }

    static func priority(of message: Message) -> String {
        message.body["android"]?["priority"]?.stringValue == "HIGH" ? "high" : "normal"
    }

    private static func appData(_ key: String, _ value: String) -> McsProto_AppData {
        var item = McsProto_AppData()
        item.key = key
        item.value = value
        return item
    }

    /// The data map, then notification fields as `gcm.notification.*`, then FCM's own keys.
    static func androidAppData(_ message: Message, _ context: Context) -> [McsProto_AppData] {
        let body = message.body
        let data = body["android"]?["data"]?.stringMap ?? message.data
        var items = data.sorted { $0.key < $1.key }.map { appData($0.key, $0.value) }
        var notification: [(String, String)] = []
        for member in body["notification"]?.objectMembers ?? [] {
            if let value = member.value.stringValue { notification.append((member.key, value)) }
        }
        for member in body["android"]?["notification"]?.objectMembers ?? [] {
            let key = androidNotificationKeys[member.key] ?? member.key
            let value = member.value.stringValue ?? member.value.rendered
            notification.removeAll { $0.0 == key }
            notification.append((key, value))
        }
        if !notification.isEmpty {
            items.append(appData("gcm.n.e", "1"))
            items += notification.map { appData("gcm.notification.\($0.0)", $0.1) }
        }
        let priority = priority(of: message)
        items += [
            appData("google.message_id", context.messageID),
            appData("google.sent_time", String(context.sentAt.milliseconds)),
            appData("google.ttl", String(context.ttlSeconds)),
            appData("google.original_priority", priority),
            appData("google.delivered_priority", priority),
            appData("google.c.sender.id", String(context.project.number)),
        ]
        if let label = message.analyticsLabel { items.append(appData("google.c.a.c_l", label)) }
        if let collapseKey = collapseKey(of: message) { items.append(appData("collapse_key", collapseKey)) }
        return items
    }

    /// FCM's web payload: `{data, notification, from, priority, fcmMessageId}` (plus
    /// `fcmOptions` and `collapse_key` when set), encrypted for the registration's keys.
    static func webPayload(_ message: Message, _ context: Context) -> JSONValue {
        let body = message.body
        var members: [(key: String, value: JSONValue)] = []
        let data = body["webpush"]?["data"]?.stringMap ?? message.data
        if !data.isEmpty { members.append((key: "data", value: .sortedStringObject(data))) }
        var notification = body["notification"]?.objectMembers ?? []
        for member in body["webpush"]?["notification"]?.objectMembers ?? [] {
            notification.removeAll { $0.key == member.key }
            notification.append(member)
        }
        if !notification.isEmpty { members.append((key: "notification", value: .object(notification))) }
        members.append((key: "from", value: .string(String(context.project.number))))
        members.append((key: "priority", value: .string(priority(of: message))))
        members.append((key: "fcmMessageId", value: .string(context.messageID)))
        if let link = body["webpush"]?["fcm_options"]?["link"] {
            members.append((key: "fcmOptions", value: .object([(key: "link", value: link)])))
        }
        if let collapseKey = collapseKey(of: message) {
            members.append((key: "collapse_key", value: .string(collapseKey)))
        }
        return .object(members)
    }

    private static func sealWebPayload(
        _ message: Message, _ context: Context, into stanza: inout McsProto_DataMessageStanza
    ) throws(WebPushEncryption.Failure) {
        guard let keys = context.registration.webKeys else { throw .invalidKey }
        let coding = WebPushEncryption.Coding(rawValue: keys.coding) ?? .aesgcm
        let sealed = try WebPushEncryption.seal(
            webPayload(message, context).renderedBytes, receiverPublicKey: keys.p256dh, authSecret: keys.auth,
            coding: coding)
        stanza.rawData = .init(sealed.ciphertext)
        var items: [McsProto_AppData] = []
        if coding == .aesgcm {
            items.append(appData("crypto-key", "dh=" + Base64URL.encodePadded(sealed.senderPublicKey)))
            items.append(appData("encryption", "salt=" + Base64URL.encodePadded(sealed.salt)))
        }
        items.append(appData("content-encoding", coding.rawValue))
        if let subtype = context.registration.subtype { items.append(appData("subtype", subtype)) }
        stanza.appData = items
    }
}
