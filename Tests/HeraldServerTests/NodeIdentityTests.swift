import Foundation
import HeraldCore
import HeraldHTTP
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Logging
import Testing

/// Node ids that cannot collide by accident, and credentials that several nodes see at once.
@Suite struct NodeIdentityTests {
    static let postgres = TestPostgres.location

    static func store(_ nodeID: String, address: String = "", sharing: PostgresStore? = nil) async throws
        -> PostgresStore
    {
        try await TestPostgres.store(nodeID, address: address, sharing: sharing)
    }

    @Test func aDerivedIdIsKeptInTheDataDirectoryAndDiffersBetweenDirectories() throws {
        let first = temporaryDirectory()
        let second = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        let id = try NodeIdentity.stable(dataDirectory: first)
        #expect(try NodeIdentity.stable(dataDirectory: first) == id)
        #expect(try NodeIdentity.stable(dataDirectory: second) != id)
    }

    @Test(.enabled(if: postgres != nil, "needs PostgreSQL: run scripts/test"))
    func aLiveNodesIdIsRefusedWithItsAddressAndAStaleOneIsTakenOver() async throws {
        let live = try await Self.store("shared-id", address: "host a, HTTP 127.0.0.1:8001")
        let clock = SystemClock()
        let beating = Task {
            while !Task.isCancelled {
                _ = try await live.heartbeat(now: clock.now(), deadAfterMilliseconds: 5_000)
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { beating.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        let second = try await Self.store("shared-id", address: "host b", sharing: live)
        let logger = Logger(label: "node-identity-test")
        do {
            try await NodeIdentity.ensureUnclaimed(second, deadAfterMilliseconds: 5_000, clock: clock, logger: logger)
            Issue.record("a live node's id was taken")
        } catch let inUse as NodeIdentity.InUse {
            #expect(inUse.holder.address == "host a, HTTP 127.0.0.1:8001")
            #expect(inUse.description.contains(#"node id "shared-id" is held by a live node"#))
            #expect(inUse.description.contains("last heartbeat"))
        }

        // A node that left (or whose heartbeat aged) frees its id.
        beating.cancel()
        _ = await beating.result
        try await live.leave()
        let started = clock.now()
        try await NodeIdentity.ensureUnclaimed(second, deadAfterMilliseconds: 5_000, clock: clock, logger: logger)
        #expect(clock.now().milliseconds - started.milliseconds < 1_000)
        let other = try await Self.store("other-id", sharing: live)
        #expect(try await other.node("shared-id")?.heartbeatAt == Timestamp(milliseconds: 0))
    }

    @Test(.enabled(if: postgres != nil, "needs PostgreSQL: run scripts/test"))
    func C1_aProjectCreatedThroughAnotherNodesStoreIsFoundAtOnce() async throws {
        let mine = try await Self.store("a")
        let theirs = try await Self.store("b", sharing: mine)
        let directory = CredentialDirectory(store: mine)
        try await directory.reload(from: mine, force: true)
        let keys = temporaryDirectory()
        try FileManager.default.createDirectory(atPath: keys, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: keys) }
        let issued = try await ProjectAdministration(store: theirs).createProject(
            id: "made-elsewhere", publicURL: "http://127.0.0.1:1", keyFileDirectory: keys)
        #expect(directory.project(named: "made-elsewhere") == nil)
        #expect(await directory.find { $0.project(named: "made-elsewhere") }?.apiKey == issued.project.apiKey)
        #expect(await directory.find { $0.activeKey(id: issued.key.id) } != nil)
    }
}
