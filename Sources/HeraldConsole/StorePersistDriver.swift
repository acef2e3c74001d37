import Crypto
import Foundation
public import HeraldCore
public import HeraldStorage
public import Hummingbird

/// Hummingbird's key-value persistence over the store's console values, so that a session
/// made on one node is known on every node and survives restarts. Keys are kept as their
/// SHA-256: a copy of the database holds no cookie a browser could present.
public struct StorePersistDriver: PersistDriver {
    let store: any ConsoleStore
    let clock: any HeraldClock
    /// What a value written without an expiry gets: the console keeps nothing for good.
    static let longestLife: Duration = .seconds(12 * 3600)

    public init(store: any ConsoleStore, clock: any HeraldClock) {
        self.store = store
        self.clock = clock
    }

    public func create<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        guard try await put(key: key, value: value, expires: expires, replacing: false) else {
            throw PersistError.duplicate
        }
    }

    public func set<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?) async throws {
        try await put(key: key, value: value, expires: expires, replacing: true)
    }

    public func get<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws -> Object? {
        try await getWithTTL(key: key, as: type)?.object
    }

    public func getWithTTL<Object: Codable & Sendable>(key: String, as type: Object.Type) async throws
        -> (object: Object, ttl: Duration?)?
    {
        let now = clock.now()
        guard let kept = try await store.consoleValue(key: Self.storedKey(key), now: now) else { return nil }
        guard let object = try? JSONDecoder().decode(type, from: Data(kept.value)) else {
            throw PersistError.invalidConversion
        }
        return (object, kept.expiresAt.map { .milliseconds($0.milliseconds - now.milliseconds) })
    }

    public func remove(key: String) async throws {
        try await store.removeConsoleValue(key: Self.storedKey(key))
    }

    @discardableResult
    private func put<Object: Codable & Sendable>(key: String, value: Object, expires: Duration?, replacing: Bool)
        async throws -> Bool
    {
        let now = clock.now()
        let milliseconds = Int64((expires ?? Self.longestLife) / .milliseconds(1))
        return try await store.putConsoleValue(
            key: Self.storedKey(key), value: Array(try JSONEncoder().encode(value)),
            expiresAt: Timestamp(milliseconds: now.milliseconds + milliseconds), replacing: replacing, now: now)
    }

    /// The key a value is kept under in the store: the SHA-256 of Hummingbird's key.
    public static func storedKey(_ key: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(key.utf8))))
    }
}
