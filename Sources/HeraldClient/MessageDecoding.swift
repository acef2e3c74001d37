import Crypto
import Foundation
import HeraldCore
import HeraldProtocol

/// Turns a `DataMessageStanza` into the message the app sees, for each platform's form.
enum MessageDecoding {
    static func remoteMessage(from stanza: McsProto_DataMessageStanza, identity: DeviceIdentity) -> RemoteMessage? {
        let appData = Dictionary(stanza.appData.map { ($0.key, $0.value) }, uniquingKeysWith: { _, last in last })
        if identity.platform == Platform.web.rawValue {
            return webMessage(stanza, appData: appData, identity: identity)
        }
        if appData["content-type"] == "application/apns+json" {
            return appleMessage(stanza, appData: appData)
        }
        var data: [String: String] = [:]
        var notification: [String: String] = [:]
        for (key, value) in appData {
            if key.hasPrefix("gcm.notification.") {
                notification[String(key.dropFirst("gcm.notification.".count))] = value
            } else if !key.hasPrefix("google.") && !key.hasPrefix("gcm.") && key != "collapse_key" {
                data[key] = value
            }
        }
        let messageID = appData["google.message_id"] ?? stanza.persistentID
        return RemoteMessage(
            messageID: messageID, persistentID: stanza.persistentID, from: stanza.from,
            collapseKey: stanza.hasToken ? stanza.token : nil, data: data,
            notification: notification.isEmpty ? nil : notification,
            sentTime: appData["google.sent_time"].flatMap(Int64.init).map { Timestamp(milliseconds: $0) },
            priority: appData["google.delivered_priority"],
            platformPayload: .sortedStringObject(appData))
    }

    /// An APNs payload: custom keys are the data, `aps.alert` and its siblings the notification.
    private static func appleMessage(_ stanza: McsProto_DataMessageStanza, appData: [String: String]) -> RemoteMessage?
    {
        guard let json = try? JSONParser.parse(Array(stanza.rawData)) else { return nil }
        var data: [String: String] = [:]
        for member in json.objectMembers ?? [] where member.key != "aps" && member.key != "fcm_options" {
            if !member.key.hasPrefix("gcm.") && !member.key.hasPrefix("google."), let value = member.value.stringValue {
                data[member.key] = value
            }
        }
        var notification: [String: String] = [:]
        let aps = json["aps"]
        switch aps?["alert"] {
        case .string(let body)?: notification["body"] = body
        case .object(let members)?:
            for member in members { notification[member.key] = member.value.stringValue ?? member.value.rendered }
        default: break
        }
        if !notification.isEmpty {
            for key in ["category", "sound", "badge", "thread-id"] {
                if let value = aps?[key] { notification[key] = value.stringValue ?? value.rendered }
            }
        }
        let messageID = appData["google.message_id"] ?? stanza.persistentID
        return RemoteMessage(
            messageID: messageID, persistentID: stanza.persistentID, from: stanza.from,
            collapseKey: stanza.hasToken ? stanza.token : nil, data: data,
            notification: notification.isEmpty ? nil : notification,
            sentTime: stanza.hasSent ? Timestamp(seconds: stanza.sent) : nil,
            priority: appData["apns-priority"] == "10" ? "high" : "normal", platformPayload: json)
    }

    private static func webMessage(
        _ stanza: McsProto_DataMessageStanza, appData: [String: String], identity: DeviceIdentity
    ) -> RemoteMessage? {
        guard let keyText = identity.webPrivateKey, let key = Base64URL.decode(keyText),
            let privateKey = try? P256.KeyAgreement.PrivateKey(rawRepresentation: key),
            let auth = identity.webAuthSecret.flatMap(Base64URL.decode)
        else { return nil }
        let coding = WebPushEncryption.Coding(rawValue: appData["content-encoding"] ?? "aesgcm") ?? .aesgcm
        let senderKey = appData["crypto-key"].flatMap { value in
            value.split(separator: ";").first { $0.hasPrefix("dh=") }.flatMap { Base64URL.decode($0.dropFirst(3)) }
        }
        let salt = appData["encryption"].flatMap { value in
            value.split(separator: ";").first { $0.hasPrefix("salt=") }.flatMap { Base64URL.decode($0.dropFirst(5)) }
        }
        guard
            let plaintext = try? WebPushEncryption.open(
                Array(stanza.rawData), receiverKey: privateKey, authSecret: auth, coding: coding,
                senderPublicKey: senderKey, salt: salt),
            let json = try? JSONParser.parse(plaintext)
        else { return nil }
        var notification: [String: String] = [:]
        for member in json["notification"]?.objectMembers ?? [] {
            notification[member.key] = member.value.stringValue ?? member.value.rendered
        }
        let messageID = json["fcmMessageId"]?.stringValue ?? stanza.persistentID
        return RemoteMessage(
            messageID: messageID, persistentID: stanza.persistentID, from: json["from"]?.stringValue ?? stanza.from,
            collapseKey: json["collapse_key"]?.stringValue, data: json["data"]?.stringMap ?? [:],
            notification: notification.isEmpty ? nil : notification,
            sentTime: stanza.hasSent ? Timestamp(seconds: stanza.sent) : nil, priority: json["priority"]?.stringValue,
            platformPayload: json)
    }
}
