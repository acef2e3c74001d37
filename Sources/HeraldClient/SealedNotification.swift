import Crypto
public import HeraldCore
public import HeraldProtocol

/// What a Notification Service Extension calls to show a notification Apple carried
/// sealed (SEMANTICS A5): APNs saw only ciphertext beside a generic alert; this opens it
/// with the app instance's keys into the APNs payload Herald would otherwise have sent
/// (`aps` with the real alert, the data keys, `gcm.message_id`).
public enum SealedNotification {
    /// The key of the ciphertext in a sealed payload.
    public static let payloadKey = WebPushEncryption.sealedAPNsPayloadKey

    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var description: String
    }

    /// Whether an APNs payload (its JSON bytes) is a sealed one.
    public static func isSealed(_ payload: [UInt8]) -> Bool {
        (try? JSONParser.parse(payload))?[payloadKey]?.stringValue != nil
    }

    /// The payload a sealed APNs payload carries, opened with the identity's keys.
    public static func open(_ payload: [UInt8], identity: DeviceIdentity) throws -> [UInt8] {
        guard let privateKey = identity.webPrivateKey, let auth = identity.webAuthSecret else {
            throw Failure(description: "this identity has no keys to open sealed notifications with")
        }
        return try open(payload, privateKey: privateKey, authSecret: auth)
    }

    /// The payload a sealed APNs payload carries, opened with a P-256 private key and auth
    /// secret (both base64url).
    public static func open(_ payload: [UInt8], privateKey: String, authSecret: String) throws -> [UInt8] {
        guard let sealed = (try? JSONParser.parse(payload))?[payloadKey]?.stringValue,
            let ciphertext = Base64URL.decode(sealed)
        else { throw Failure(description: "the payload is not a sealed notification") }
        guard let keyBytes = Base64URL.decode(privateKey),
            let key = try? P256.KeyAgreement.PrivateKey(rawRepresentation: keyBytes),
            let auth = Base64URL.decode(authSecret)
        else { throw Failure(description: "the keys are not a P-256 private key and auth secret") }
        do {
            return try WebPushEncryption.open(ciphertext, receiverKey: key, authSecret: auth, coding: .aes128gcm)
        } catch {
            throw Failure(description: "the notification could not be opened: \(error)")
        }
    }
}
