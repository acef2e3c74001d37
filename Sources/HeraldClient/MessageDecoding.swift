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
