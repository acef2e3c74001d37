public import HeraldCore

/// One message of Mozilla's push protocol (the WebSocket protocol Firefox and UnifiedPush's
/// Sunup speak to their push server; WIRE.md §8b), as a browser or phone sends it. Each is a
/// JSON object in one text frame, named by its `messageType`; `{}` is a ping.
public enum MozillaPushMessage: Sendable, Equatable {
    /// Opens the session: the `uaid` the client was given before, if any.
    case hello(uaid: String?)
    /// Asks for a push endpoint for a channel, restricted to an application server key
    /// (base64url, uncompressed P-256) when one is given.
    case register(channelID: String, key: String?)
    case unregister(channelID: String)
    /// The client has the notifications with these versions.
    case ack([String])
    /// The client could not take a notification; it stays the server's to send again.
    case nack(version: String)
    case ping
    /// Subscribes to broadcasts, which this server does not publish: answered with nothing.
    case broadcastSubscribe

    /// Why a text is not a message of the protocol.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case notJSON
        case unknownType(String)
        case missingField(String)
        case invalidChannelID(String)

        public var description: String {
            switch self {
            case .notJSON: "the message is not a JSON object"
            case .unknownType(let type): "unknown messageType \(type.prefix(32))"
            case .missingField(let name): "\(name) is missing"
            case .invalidChannelID(let id): "invalid channelID \(id.prefix(40)): not a lower-case, dashed UUID"
            }
        }
    }

    /// The most updates one `ack` may carry.
    public static let maximumUpdates = 100

    /// Reads one text frame.
    public static func parse(_ text: some Collection<UInt8>) throws(Failure) -> MozillaPushMessage {
        guard let json = try? JSONParser.parse(text), let members = json.objectMembers else { throw .notJSON }
        if members.isEmpty { return .ping }
        guard let type = json["messageType"]?.stringValue else { throw .missingField("messageType") }
        switch type {
        case "hello":
            // An id that is not one of ours is treated as none: the client is given a new one.
            return .hello(uaid: json["uaid"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 })
        case "register":
            let key = json["key"]?.stringValue
            return .register(channelID: try channelID(json["channelID"]), key: key?.isEmpty == true ? nil : key)
        case "unregister":
            return .unregister(channelID: try channelID(json["channelID"]))
        case "ack":
            guard let updates = json["updates"]?.arrayElements, updates.count <= maximumUpdates else {
                throw .missingField("updates")
            }
            return .ack(updates.compactMap { $0["version"]?.stringValue })
        case "nack":
            guard let version = json["version"]?.stringValue else { throw .missingField("version") }
            return .nack(version: version)
        case "ping":
            return .ping
        case "broadcast_subscribe":
            return .broadcastSubscribe
        default:
            throw .unknownType(type)
        }
    }

    /// A channel id as autopush takes it: a UUID in its lower-case, dashed form.
    private static func channelID(_ value: JSONValue?) throws(Failure) -> String {
        guard let id = value?.stringValue else { throw .missingField("channelID") }
        guard isChannelID(id) else { throw .invalidChannelID(id) }
        return id
    }

    /// Whether `text` is a UUID written lower-case with dashes (8-4-4-4-12 hex digits).
    public static func isChannelID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else if !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte),
                !(UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
            {
                return false
            }
        }
        return true
    }
}
