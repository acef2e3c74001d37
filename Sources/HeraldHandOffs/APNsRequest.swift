import Crypto
public import HeraldCore
import HeraldProtocol
public import HeraldStorage

/// The request to APNs that hands off one queue entry (SEMANTICS A2): `POST
/// /3/device/<token>` with the payload and headers the entry's Apple-tailored stanza
/// carries, `apns-topic` the app's bundle id, and an `apns-id` derived from the entry's
/// persistent id, so a retry after a crash carries the same one.
public struct APNsRequest: Sendable, Equatable {
    public var path: String
    public var headers: [(String, String)]
    public var payload: [UInt8]

    /// The stanza's entries that become request headers.
    static let headerNames: Set<String> = ["apns-push-type", "apns-priority", "apns-expiration", "apns-collapse-id"]

    /// Why an entry cannot be handed off.
    public struct Unusable: Error, Sendable, Equatable {}

    /// What a tailored stanza gives every request made from it: the payload and the
    /// stanza's request headers. A fanout's entries share one stanza, read once.
    public struct Template: Sendable, Equatable {
        var payload: [UInt8]
        var headers: [(String, String)]

        public init(stanza: [UInt8]) throws(Unusable) {
            guard let stanza = try? McsProto_DataMessageStanza(serializedBytes: stanza),
                stanza.appData.contains(where: { $0.key == "content-type" && $0.value == "application/apns+json" })
            else { throw Unusable() }
            payload = Array(stanza.rawData)
            headers = stanza.appData.filter { APNsRequest.headerNames.contains($0.key) }.map { ($0.key, $0.value) }
        }

        public static func == (lhs: Template, rhs: Template) -> Bool {
            lhs.payload == rhs.payload && lhs.headers.elementsEqual(rhs.headers, by: ==)
        }
    }

    /// The request for `handOff`, whose app is `bundleID`.
    public init(_ handOff: HandOff, bundleID: String) throws(Unusable) {
        self.init(handOff, bundleID: bundleID, template: try Template(stanza: handOff.entry.stanza))
    }

    /// The request for `handOff` from its stanza's `template`.
    public init(_ handOff: HandOff, bundleID: String, template: Template) {
        path = "/3/device/" + (handOff.apns?.deviceToken ?? "")
        payload = template.payload
        headers = [("apns-topic", bundleID), ("apns-id", Self.apnsID(persistentID: handOff.entry.persistentID))]
        headers += template.headers
    }

    /// A UUID made from the persistent id (the leading bytes of its SHA-256, marked as a
    /// name-based UUID), the same every time.
    public static func apnsID(persistentID: String) -> String {
        var bytes = Array(SHA256.hash(data: Array(persistentID.utf8)).prefix(16))
        bytes[6] = bytes[6] & 0x0F | 0x50
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef".utf8)
            return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        }.joined()
        let utf8 = Array(hex.utf8)
        return [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(decoding: utf8[$0], as: UTF8.self) }
            .joined(separator: "-")
    }

    public static func == (lhs: APNsRequest, rhs: APNsRequest) -> Bool {
        lhs.path == rhs.path && lhs.payload == rhs.payload && lhs.headers.elementsEqual(rhs.headers, by: ==)
    }
}
