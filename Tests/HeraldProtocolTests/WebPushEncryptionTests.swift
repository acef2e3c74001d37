import Crypto
import HeraldCore
import HeraldProtocol
import Testing

@Suite struct WebPushEncryptionTests {
    func bytes(_ base64url: String) -> [UInt8] { Base64URL.decode(base64url)! }

    /// The worked example of RFC 8291, section 5.
    @Test func aes128gcmMatchesTheRFC8291Example() throws {
        let sender = try P256.KeyAgreement.PrivateKey(
            rawRepresentation: bytes("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"))
        let receiverPublic = bytes(
            "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4")
        let sealed = try WebPushEncryption.seal(
            Array("When I grow up, I want to be a watermelon".utf8), receiverPublicKey: receiverPublic,
            authSecret: bytes("BTBZMqHH6r4Tts7J_aSIgg"), coding: .aes128gcm, senderKey: sender,
            salt: bytes("DGv6ra1nlYgDCS1FRnbzlw"))
        #expect(
            Base64URL.encode(sealed.ciphertext)
                == "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"
        )
    }

    @Test(arguments: [WebPushEncryption.Coding.aesgcm, .aes128gcm], [0, 1, 4094, 4095, 9000])
    func sealedPayloadsOpenWithTheReceiversKey(coding: WebPushEncryption.Coding, size: Int) throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        let auth = SecureRandom.bytes(16)
        let plaintext = (0..<size).map { UInt8($0 % 251) }
        let sealed = try WebPushEncryption.seal(
            plaintext, receiverPublicKey: Array(receiver.publicKey.x963Representation), authSecret: auth, coding: coding
        )
        let opened = try WebPushEncryption.open(
            sealed.ciphertext, receiverKey: receiver, authSecret: auth, coding: coding,
            senderPublicKey: sealed.senderPublicKey, salt: sealed.salt)
        #expect(opened == plaintext)
        if coding == .aesgcm {
            // The last record is never a full one, as decoders require.
            #expect(sealed.ciphertext.count % 4112 != 0)
        }
    }

    @Test func aWrongAuthSecretFailsToOpen() throws {
        let receiver = P256.KeyAgreement.PrivateKey()
        let sealed = try WebPushEncryption.seal(
            [1, 2, 3], receiverPublicKey: Array(receiver.publicKey.x963Representation),
            authSecret: SecureRandom.bytes(16),
            coding: .aesgcm)
        #expect(throws: WebPushEncryption.Failure.authenticationFailed) {
            try WebPushEncryption.open(
                sealed.ciphertext, receiverKey: receiver, authSecret: SecureRandom.bytes(16), coding: .aesgcm,
                senderPublicKey: sealed.senderPublicKey, salt: sealed.salt)
        }
    }

    @Test func invalidReceiverKeysAreRefused() {
        #expect(throws: WebPushEncryption.Failure.invalidKey) {
            try WebPushEncryption.seal(
                [1], receiverPublicKey: [4, 1, 2], authSecret: SecureRandom.bytes(16), coding: .aesgcm)
        }
    }
}
