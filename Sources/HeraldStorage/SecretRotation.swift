public import HeraldCore

/// A secret and, after `HeraldStore.rotateSecret`, the one it replaced: the previous value
/// is still accepted for `overlapSeconds` after the rotation, then never again.
public struct SecretRotation: Sendable {
    static let previousSuffix = ".previous"
    static let rotatedAtSuffix = ".rotated-at"
    /// How long a replaced secret is still accepted: one hour, the longest an access token lives.
    public static let overlapSeconds: Int64 = 3600

    public var current: [UInt8]
    /// The replaced secret and until when it is accepted, if there was a rotation.
    public var previous: (value: [UInt8], acceptedUntil: Timestamp)?

    public init(current: [UInt8], previous: (value: [UInt8], acceptedUntil: Timestamp)?) {
        self.current = current
        self.previous = previous
    }

    /// Reads the secret `name` (made by `make` the first time) and its previous value.
    public static func load(
        named name: String, from store: any CredentialStore, orCreate make: @escaping @Sendable () -> [UInt8]
    ) async throws -> SecretRotation {
        let current = try await store.secret(named: name, orCreate: make)
        let previous = try await store.secret(named: name + previousSuffix) { [] }
        let rotatedAt = decode(try await store.secret(named: name + rotatedAtSuffix) { [] })
        guard !previous.isEmpty, let rotatedAt else { return SecretRotation(current: current, previous: nil) }
        return SecretRotation(current: current, previous: (previous, rotatedAt.adding(seconds: overlapSeconds)))
    }

    static func encode(_ time: Timestamp) -> [UInt8] {
        withUnsafeBytes(of: time.milliseconds.bigEndian, Array.init)
    }

    static func decode(_ bytes: [UInt8]) -> Timestamp? {
        guard bytes.count == 8 else { return nil }
        return Timestamp(milliseconds: bytes.reduce(0) { $0 << 8 | Int64($1) })
    }
}
