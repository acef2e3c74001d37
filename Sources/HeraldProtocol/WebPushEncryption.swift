public import Crypto
public import Foundation

/// Web Push message encryption: `aesgcm` (draft-ietf-webpush-encryption-04, what FCM's
/// web clients read from MCS) and `aes128gcm` (RFC 8188 and RFC 8291).
public enum WebPushEncryption {
    /// The content coding.
    public enum Coding: String, Sendable, Codable {
        case aesgcm
        case aes128gcm
    }

    /// An encrypted payload with what the receiver needs to decrypt it.
    public struct Sealed: Sendable, Equatable {
        /// The ciphertext (for `aes128gcm`, with its header).
        public var ciphertext: [UInt8]
        /// The sender's ephemeral public key, uncompressed (65 bytes).
        public var senderPublicKey: [UInt8]
        /// The 16-byte salt.
        public var salt: [UInt8]
    }

    /// Why encryption or decryption failed.
    public enum Failure: Error, Sendable, Equatable {
        case invalidKey
        case invalidAuthSecret
        case malformed
        case authenticationFailed
        /// The sealed body is `bytes` long, more than a push service takes (`maximumBodyBytes`).
        case tooLarge(bytes: Int)
    }

    /// The largest encrypted body a push service must take (RFC 8030 section 7.2).
    public static let maximumBodyBytes = 4096

    /// The key under which a sealed APNs payload carries its ciphertext (base64url,
    /// `aes128gcm`), for Apple app instances whose messages Apple must not read.
    public static let sealedAPNsPayloadKey = "herald.sealed"

    static let recordSize = 4096
    static let tagLength = 16

    /// Encrypts a payload for a receiver's P-256 public key (`p256dh`) and auth secret.
    public static func seal(
        _ plaintext: [UInt8], receiverPublicKey: [UInt8], authSecret: [UInt8], coding: Coding,
        senderKey: P256.KeyAgreement.PrivateKey = P256.KeyAgreement.PrivateKey(),
        salt: [UInt8] = Array(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) })
    ) throws(Failure) -> Sealed {
        guard let receiver = try? P256.KeyAgreement.PublicKey(x963Representation: receiverPublicKey) else {
            throw .invalidKey
        }
        guard authSecret.count == 16 else { throw .invalidAuthSecret }
        let senderPublic = Array(senderKey.publicKey.x963Representation)
        guard let shared = try? senderKey.sharedSecretFromKeyAgreement(with: receiver) else { throw .invalidKey }
        let (key, nonce) = deriveKeys(
            shared: shared, coding: coding, salt: salt, authSecret: authSecret, receiverPublic: receiverPublicKey,
            senderPublic: senderPublic)
        var ciphertext: [UInt8] = []
        switch coding {
        case .aesgcm:
            // Records of at most 4096 plaintext bytes, each a 2-byte padding length first;
            // the last record must be shorter than a full one.
            let chunk = recordSize - 2
            var offset = 0
            var counter: UInt64 = 0
            repeat {
                let end = min(offset + chunk, plaintext.count)
                ciphertext += try sealRecord(
                    [0, 0] + plaintext[offset..<end], key: key, nonce: nonce, counter: counter)
                counter += 1
                offset = end
            } while offset < plaintext.count || ciphertext.count % (recordSize + tagLength) == 0
        case .aes128gcm:
            // One record large enough for the whole payload.
            let size = max(recordSize, plaintext.count + 1 + tagLength)
            ciphertext = salt
            ciphertext += withUnsafeBytes(of: UInt32(size).bigEndian, Array.init)
            ciphertext.append(UInt8(senderPublic.count))
            ciphertext += senderPublic
            ciphertext += try sealRecord(plaintext + [2], key: key, nonce: nonce, counter: 0)
        }
        return Sealed(ciphertext: ciphertext, senderPublicKey: senderPublic, salt: salt)
    }

    /// Decrypts a payload with the receiver's private key and auth secret. For `aesgcm`
    /// the sender's public key and salt come from the `Crypto-Key` and `Encryption` values;
    /// for `aes128gcm` they are read from the ciphertext's header.
    public static func open(
        _ ciphertext: [UInt8], receiverKey: P256.KeyAgreement.PrivateKey, authSecret: [UInt8], coding: Coding,
        senderPublicKey: [UInt8]? = nil, salt: [UInt8]? = nil
    ) throws(Failure) -> [UInt8] {
        var body = ciphertext[...]
        var senderPublic = senderPublicKey ?? []
        var saltBytes = salt ?? []
        var recordLength = recordSize + tagLength
        if coding == .aes128gcm {
            guard body.count >= 21 else { throw .malformed }
            saltBytes = Array(body.prefix(16))
            let sizeBytes = Array(body.dropFirst(16).prefix(4))
            recordLength = Int(sizeBytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
            let idLength = Int(body[body.startIndex + 20])
            guard body.count >= 21 + idLength else { throw .malformed }
            senderPublic = Array(body.dropFirst(21).prefix(idLength))
            body = body.dropFirst(21 + idLength)
        }
        guard saltBytes.count == 16, recordLength > tagLength + 1 else { throw .malformed }
        guard let sender = try? P256.KeyAgreement.PublicKey(x963Representation: senderPublic),
            let shared = try? receiverKey.sharedSecretFromKeyAgreement(with: sender)
        else { throw .invalidKey }
        let (key, nonce) = deriveKeys(
            shared: shared, coding: coding, salt: saltBytes, authSecret: authSecret,
            receiverPublic: Array(receiverKey.publicKey.x963Representation), senderPublic: senderPublic)
        var plaintext: [UInt8] = []
        var counter: UInt64 = 0
        while !body.isEmpty {
            let record = Array(body.prefix(recordLength))
            body = body.dropFirst(recordLength)
            var data = try openRecord(record, key: key, nonce: nonce, counter: counter)
            switch coding {
            case .aesgcm:
                guard data.count >= 2 else { throw .malformed }
                let padding = Int(data[0]) << 8 | Int(data[1])
                guard data.count >= 2 + padding else { throw .malformed }
                plaintext += data.dropFirst(2 + padding)
            case .aes128gcm:
                while let last = data.last, last == 0 { data.removeLast() }
                guard let delimiter = data.popLast(), delimiter == 1 || delimiter == 2 else { throw .malformed }
                plaintext += data
            }
            counter += 1
        }
        return plaintext
    }

    private static func deriveKeys(
        shared: SharedSecret, coding: Coding, salt: [UInt8], authSecret: [UInt8], receiverPublic: [UInt8],
        senderPublic: [UInt8]
    ) -> (SymmetricKey, [UInt8]) {
        let authInfo: [UInt8]
        let keyInfo: [UInt8]
        let nonceInfo: [UInt8]
        switch coding {
        case .aesgcm:
            func lengthPrefixed(_ key: [UInt8]) -> [UInt8] { [UInt8(key.count >> 8), UInt8(key.count & 0xFF)] + key }
            let context = Array("P-256".utf8) + [0] + lengthPrefixed(receiverPublic) + lengthPrefixed(senderPublic)
            authInfo = Array("Content-Encoding: auth".utf8) + [0]
            keyInfo = Array("Content-Encoding: aesgcm".utf8) + [0] + context
            nonceInfo = Array("Content-Encoding: nonce".utf8) + [0] + context
        case .aes128gcm:
            authInfo = Array("WebPush: info".utf8) + [0] + receiverPublic + senderPublic
            keyInfo = Array("Content-Encoding: aes128gcm".utf8) + [0]
            nonceInfo = Array("Content-Encoding: nonce".utf8) + [0]
        }
        let inputKey = shared.hkdfDerivedSymmetricKey(
            using: SHA256.self, salt: authSecret, sharedInfo: authInfo, outputByteCount: 32)
        let key = HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKey, salt: salt, info: keyInfo, outputByteCount: 16)
        let nonce = HKDF<SHA256>.deriveKey(inputKeyMaterial: inputKey, salt: salt, info: nonceInfo, outputByteCount: 12)
        return (key, nonce.withUnsafeBytes { Array($0) })
    }

    private static func recordNonce(_ base: [UInt8], counter: UInt64) -> [UInt8] {
        var nonce = base
        for i in 0..<8 {
            nonce[4 + i] ^= UInt8((counter >> (8 * UInt64(7 - i))) & 0xFF)
        }
        return nonce
    }

    private static func sealRecord(_ record: [UInt8], key: SymmetricKey, nonce: [UInt8], counter: UInt64)
        throws(Failure) -> [UInt8]
    {
        do {
            let box = try AES.GCM.seal(
                record, using: key, nonce: AES.GCM.Nonce(data: recordNonce(nonce, counter: counter)))
            return Array(box.ciphertext) + Array(box.tag)
        } catch {
            throw .malformed
        }
    }

    private static func openRecord(_ record: [UInt8], key: SymmetricKey, nonce: [UInt8], counter: UInt64)
        throws(Failure) -> [UInt8]
    {
        guard record.count > tagLength else { throw .malformed }
        do {
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: recordNonce(nonce, counter: counter)),
                ciphertext: record.dropLast(tagLength), tag: record.suffix(tagLength))
            return Array(try AES.GCM.open(box, using: key))
        } catch {
            throw .authenticationFailed
        }
    }
}
