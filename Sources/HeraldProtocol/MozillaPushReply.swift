public import HeraldCore

/// What this server sends in Mozilla's push protocol, rendered as the text of one frame.
public enum MozillaPushReply {
    public static func hello(uaid: String) -> String {
        JSONValue.object([
            ("messageType", .string("hello")), ("uaid", .string(uaid)), ("status", .number(200)),
            ("use_webpush", .bool(true)), ("broadcasts", .object([])),
        ]).rendered
    }

    /// The answer to `register`: the endpoint when `status` is 200.
    public static func register(channelID: String, status: Int, pushEndpoint: String) -> String {
        JSONValue.object([
            ("messageType", .string("register")), ("channelID", .string(channelID)),
            ("status", .number(Double(status))), ("pushEndpoint", .string(pushEndpoint)),
        ]).rendered
    }

    public static func unregister(channelID: String, status: Int) -> String {
        JSONValue.object([
            ("messageType", .string("unregister")), ("channelID", .string(channelID)),
            ("status", .number(Double(status))),
        ]).rendered
    }

    public static let ping = "{}"

    /// A push message: its `version` (what the client acknowledges), the body base64url
    /// encoded as `data`, and how it is encrypted as `headers` (`encoding`, and for `aesgcm`
    /// `crypto_key` and `encryption`). A push without a body has neither.
    public static func notification(
        channelID: String, version: String, body: [UInt8], encoding: String?, cryptoKey: String?, encryption: String?
    ) -> String {
        var members: [(key: String, value: JSONValue)] = [
            ("messageType", .string("notification")), ("channelID", .string(channelID)), ("version", .string(version)),
        ]
        if !body.isEmpty {
            members.append(("data", .string(Base64URL.encode(body))))
            var headers: [(key: String, value: JSONValue)] = [("encoding", .string(encoding ?? "aes128gcm"))]
            if let cryptoKey { headers.append(("crypto_key", .string(cryptoKey))) }
            if let encryption { headers.append(("encryption", .string(encryption))) }
            members.append(("headers", .object(headers)))
        }
        return JSONValue.object(members).rendered
    }
}
