import HeraldCore
import Testing

/// The header rules of a push message (RFC 8030 §5, RFC 8291, the aesgcm draft).
@Suite struct WebPushRequestTests {
    let aes128gcmBody = [UInt8](repeating: 7, count: 120)

    func parse(_ headers: [String: String], body: [UInt8]) throws(WebPushRequest.Refusal) -> WebPushRequest {
        try WebPushRequest.parse(header: { headers[$0] }, body: body)
    }

    func status(_ headers: [String: String], body: [UInt8]) -> Int? {
        do {
            _ = try parse(headers, body: body)
            return nil
        } catch {
            return error.status
        }
    }

    @Test func D5_D4_D2_ttlUrgencyAndTopicAreRead() throws {
        let request = try parse(
            [
                "ttl": " 90 ", "urgency": "high", "topic": "score_1-0", "content-encoding": "aes128gcm",
                "prefer": "respond-async",
            ], body: aes128gcmBody)
        #expect(request.ttlSeconds == 90 && request.urgency == .high && request.topic == "score_1-0")
        #expect(request.contentEncoding == "aes128gcm" && request.body == aes128gcmBody && request.wantsReceipt)
        // Longer than four weeks: kept for four weeks, which the answer's TTL says.
        #expect(try parse(["ttl": "99999999"], body: []).ttlSeconds == WebPushRequest.maximumTTLSeconds)
        // A push without a body needs no encoding.
        #expect(try parse(["ttl": "0"], body: []).contentEncoding == nil)
    }

    @Test func aesgcmCarriesItsEncryptionAndCryptoKeyHeaders() throws {
        let request = try parse(
            ["ttl": "60", "content-encoding": "aesgcm", "encryption": "salt=abc", "crypto-key": "dh=BCD;p256ecdsa=E"],
            body: [1, 2, 3])
        #expect(request.encryption == "salt=abc" && request.cryptoKey == "dh=BCD;p256ecdsa=E")
        #expect(status(["ttl": "60", "content-encoding": "aesgcm", "encryption": "salt=abc"], body: [1]) == 400)
    }

    @Test func badRequestsGetRFC8030sStatuses() {
        #expect(status(["content-encoding": "aes128gcm"], body: aes128gcmBody) == 400)
        #expect(status(["ttl": "-1"], body: []) == 400)
        #expect(status(["ttl": "soon"], body: []) == 400)
        #expect(status(["ttl": "60", "urgency": "urgent"], body: []) == 400)
        #expect(status(["ttl": "60", "topic": "has space"], body: []) == 400)
        #expect(status(["ttl": "60", "topic": String(repeating: "a", count: 33)], body: []) == 400)
        #expect(status(["ttl": "60", "content-encoding": "gzip"], body: aes128gcmBody) == 400)
        #expect(status(["ttl": "60"], body: aes128gcmBody) == 400)
        #expect(status(["ttl": "60", "content-encoding": "aes128gcm"], body: [1, 2]) == 400)
        #expect(
            status(["ttl": "60", "content-encoding": "aes128gcm"], body: [UInt8](repeating: 0, count: 4097)) == 413)
    }
}
