import Crypto
public import HeraldCore
import _CryptoExtras

/// The ids events are given outside the store (SEMANTICS E4): the stream's `id:` and
/// `Last-Event-ID`, the JSON `id`, webhooks' `Herald-Event-Id`, page tokens. A stored
/// event's sequence counts every project's events, so showing it would tell one tenant how
/// busy the others are. An id is the sequence and eight zero bytes permuted with AES under
/// a key of the event's project, derived from a secret the nodes share: opaque, stable,
/// and an id of another project is refused rather than read as a position.
public struct EventIDs: Sendable {
    /// The name of the shared secret in the store.
    public static let secretName = "event-id-key"
    private let secret: SymmetricKey

    public init(secret: [UInt8]) {
        self.secret = SymmetricKey(data: secret)
    }

    /// Reads the shared secret, made the first time.
    public static func load(from store: any CredentialStore) async throws -> EventIDs {
        EventIDs(secret: try await store.secret(named: secretName) { SecureRandom.bytes(32) })
    }

    /// The ids of one project's events: the key is derived once, for a page, a stream or
    /// a webhook's turn, not once an event.
    public func project(_ projectID: String) -> Project {
        Project(
            key: HKDF<SHA256>.deriveKey(
                inputKeyMaterial: secret, info: Array("herald event ids \(projectID)".utf8), outputByteCount: 16))
    }

    /// The id of the event at `sequence` of `projectID`.
    public func id(sequence: Int64, projectID: String) -> String {
        project(projectID).id(sequence: sequence)
    }

    /// The sequence an id of `projectID` stands for (see `Project.sequence(of:)`).
    public func sequence(of id: String, projectID: String) -> Int64? {
        project(projectID).sequence(of: id)
    }

    /// One project's event ids.
    public struct Project: Sendable {
        let key: SymmetricKey

        /// The id of the event at `sequence`.
        public func id(sequence: Int64) -> String {
            var block = [UInt8](repeating: 0, count: 16)
            for index in 0..<8 {
                block[index] = UInt8(truncatingIfNeeded: UInt64(bitPattern: sequence) >> (56 - 8 * index))
            }
            // A 16-byte block and a 16-byte key: permuting cannot fail.
            try? AES.permute(&block, key: key)
            return Base64URL.encode(block)
        }

        /// The event as JSON, with its id.
        public func json(_ event: MessageEvent) -> JSONValue {
            event.json(id: id(sequence: event.sequence))
        }

        /// The sequence an id stands for; nil for anything else (another project's id, a
        /// changed one). A decimal number is taken as the sequence itself: the ids a release
        /// before this one gave, so that a client resumes across an upgrade.
        public func sequence(of id: String) -> Int64? {
            if let sequence = Int64(id), sequence >= 0 { return sequence }
            guard var block = Base64URL.decode(id), block.count == 16,
                (try? AES.inversePermute(&block, key: key)) != nil, block[8...].allSatisfy({ $0 == 0 })
            else { return nil }
            return Int64(bitPattern: block[0..<8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) })
        }
    }
}
