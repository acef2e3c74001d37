public import HeraldCore
public import HeraldProtocol

/// Turns a message into the `DataMessageStanza` one registration receives, tailored for
/// its platform (SEMANTICS P1): Android registrations get the data map and
/// `gcm.notification.*` keys in `app_data`; Apple registrations get an APNs payload (an
/// `aps` dictionary plus custom keys) in `raw_data`; web registrations get FCM's JSON
/// payload, encrypted with Web Push, in `raw_data`.
public enum DeliveryTailor {
    /// What a tailored delivery needs besides the message.
    public struct Context: Sendable {
        public var messageID: String
        public var registration: Registration
        public var project: Project
        public var sentAt: Timestamp
        public var options: DeliveryOptions

        public init(
            messageID: String, registration: Registration, project: Project, sentAt: Timestamp, options: DeliveryOptions
        ) {
            self.messageID = messageID
            self.registration = registration
            self.project = project
            self.sentAt = sentAt
            self.options = options
        }

        var ttlSeconds: Int64 { options.ttlSeconds }
        var priority: String { options.isHighPriority ? "high" : "normal" }
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
        if let collapseKey = context.options.collapseKey { stanza.token = collapseKey }
        switch registration.platform {
        case .web:
            try sealWebPayload(message, context, into: &stanza)
        case .android where registration.isRelayedToFCM:
            // SEMANTICS R3: FCM gets the message as its sender wrote it.
            stanza.rawData = .init(message.body.renderedBytes)
            stanza.appData = [appData("content-type", "application/fcm+json")]
        case .android:
            stanza.appData = androidAppData(message, context)
        case .apple:
            let payload = applePayload(message, context)
            if let keys = registration.webKeys {
                stanza.rawData = .init(try sealedApplePayload(payload, keys: keys).renderedBytes)
            } else {
                stanza.rawData = .init(payload.renderedBytes)
            }
            stanza.appData = [
                appData("content-type", "application/apns+json"), appData("google.message_id", context.messageID),
            ]
            stanza.appData += appleHeaders(message, payload: payload, context).map { appData($0.0, $0.1) }
        }
        return stanza
    }

    /// The "messages deleted" signal (SEMANTICS D1) for a registration; the gateway adds
    /// `total_deleted` when it sends it.
    public static func deletionSignal(for registration: Registration) -> McsProto_DataMessageStanza {
        var stanza = McsProto_DataMessageStanza()
        stanza.from = registration.sender
        stanza.category = registration.appID
        stanza.appData = [appData("message_type", "deleted_messages")]
        if let subtype = registration.subtype { stanza.appData.append(appData("subtype", subtype)) }
        return stanza
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
        let priority = context.priority
        items += [
            appData("google.message_id", context.messageID),
            appData("google.sent_time", String(context.sentAt.milliseconds)),
            appData("google.ttl", String(context.ttlSeconds)),
            appData("google.original_priority", priority),
            appData("google.delivered_priority", priority),
            appData("google.c.sender.id", String(context.project.number)),
        ]
        if let label = message.analyticsLabel { items.append(appData("google.c.a.c_l", label)) }
        if let collapseKey = context.options.collapseKey { items.append(appData("collapse_key", collapseKey)) }
        return items
    }

    /// The APNs request headers a message gets (SEMANTICS A2): the sender's `apns.headers`,
    /// else `apns-push-type` `alert` for a payload that shows something and `background`
    /// for one that only wakes the app; `apns-priority` 10 or 5 as the delivery options
    /// say, and always 5 for a background push; `apns-expiration` from the time to live
    /// (0 for now or never); `apns-collapse-id` when the sender gave one.
    static func appleHeaders(_ message: Message, payload: JSONValue, _ context: Context) -> [(String, String)] {
        let headers = HeaderMap(message.body["apns"]?["headers"])
        let aps = payload["aps"]
        let shows = aps?["alert"] != nil || aps?["badge"] != nil || aps?["sound"] != nil
        let pushType = headers["apns-push-type"] ?? (shows || aps?["content-available"] == nil ? "alert" : "background")
        let priority = pushType == "background" ? "5" : (context.options.isHighPriority ? "10" : "5")
        let ttl = context.ttlSeconds
        var result = [
            ("apns-push-type", pushType), ("apns-priority", priority),
            ("apns-expiration", headers["apns-expiration"] ?? (ttl == 0 ? "0" : String(context.sentAt.seconds + ttl))),
        ]
        if let collapseID = headers["apns-collapse-id"] { result.append(("apns-collapse-id", collapseID)) }
        return result
    }

    /// The APNs payload: `apns.payload` with its `aps` dictionary, the common notification
    /// as `aps.alert` unless the payload has one, `mutable-content` when there is an image
    /// for a Notification Service Extension to fetch, the data pairs as custom keys, and
    /// `content-available` for data-only messages.
    static func applePayload(_ message: Message, _ context: Context) -> JSONValue {
        let body = message.body
        var members = body["apns"]?["payload"]?.objectMembers ?? []
        var aps = members.first { $0.key == "aps" }?.value.objectMembers ?? []
        members.removeAll { $0.key == "aps" }
        if !aps.contains(where: { $0.key == "alert" }), let notification = body["notification"]?.objectMembers {
            let alert = notification.filter { $0.key == "title" || $0.key == "body" }
            if !alert.isEmpty { aps.append((key: "alert", value: .object(alert))) }
        }
        if !message.isNotificationMessage, !aps.contains(where: { $0.key == "content-available" }) {
            aps.append((key: "content-available", value: .number(1)))
        }
        let image = body["apns"]?["fcm_options"]?["image"] ?? body["notification"]?["image"]
        if image != nil, !aps.contains(where: { $0.key == "mutable-content" }) {
            aps.append((key: "mutable-content", value: .number(1)))
        }
        var payload: [(key: String, value: JSONValue)] = [(key: "aps", value: .object(aps))]
        payload += members
        for (key, value) in message.data.sorted(by: { $0.key < $1.key })
        where !members.contains(where: { $0.key == key }) {
            payload.append((key: key, value: .string(value)))
        }
        if let image {
            payload.append((key: "fcm_options", value: .object([(key: "image", value: image)])))
        }
        payload.append((key: "gcm.message_id", value: .string(context.messageID)))
        return .object(payload)
    }

    /// The alert Apple shows when no Notification Service Extension replaces it.
    public static let sealedAlertBody = "New notification"

    /// An APNs payload Apple cannot read (SEMANTICS A5): the whole payload sealed for the app
    /// instance's keys under `WebPushEncryption.sealedAPNsPayloadKey`, beside a generic alert with
    /// `mutable-content` (so that its Notification Service Extension opens it and shows the
    /// real one), or only `content-available` for a background push.
    static func sealedApplePayload(_ payload: JSONValue, keys: WebPushKeys) throws(WebPushEncryption.Failure)
        -> JSONValue
    {
        let sealed = try WebPushEncryption.seal(
            payload.renderedBytes, receiverPublicKey: keys.p256dh, authSecret: keys.auth, coding: .aes128gcm)
        let aps = payload["aps"]
        let visible: [(key: String, value: JSONValue)] =
            aps?["alert"] != nil || aps?["badge"] != nil || aps?["sound"] != nil
            ? [
                (key: "alert", value: .object([(key: "body", value: .string(sealedAlertBody))])),
                (key: "mutable-content", value: .number(1)),
            ]
            : [(key: "content-available", value: .number(1))]
        return .object([
            (key: "aps", value: .object(visible)),
            (key: WebPushEncryption.sealedAPNsPayloadKey, value: .string(Base64URL.encode(sealed.ciphertext))),
        ])
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
        members.append((key: "priority", value: .string(context.priority)))
        members.append((key: "fcmMessageId", value: .string(context.messageID)))
        if let link = body["webpush"]?["fcm_options"]?["link"] {
            members.append((key: "fcmOptions", value: .object([(key: "link", value: link)])))
        }
        if let collapseKey = context.options.collapseKey, !collapseKey.isEmpty {
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
        if context.registration.webPushEndpoint != nil {
            // SEMANTICS W2: what the browser's push service takes, and the headers the sender chose.
            guard sealed.ciphertext.count <= WebPushEncryption.maximumBodyBytes else {
                throw .tooLarge(bytes: sealed.ciphertext.count)
            }
            for member in message.body["webpush"]?["headers"]?.objectMembers ?? [] {
                let name = member.key.lowercased()
                if name == "urgency" || name == "topic", let value = member.value.stringValue {
                    items.append(appData(name, value))
                }
            }
        }
        if coding == .aesgcm {
            items.append(appData("crypto-key", "dh=" + Base64URL.encodePadded(sealed.senderPublicKey)))
            items.append(appData("encryption", "salt=" + Base64URL.encodePadded(sealed.salt)))
        }
        items.append(appData("content-encoding", coding.rawValue))
        if let subtype = context.registration.subtype { items.append(appData("subtype", subtype)) }
        stanza.appData = items
    }
}
