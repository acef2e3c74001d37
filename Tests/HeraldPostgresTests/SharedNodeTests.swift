import Foundation
import HeraldCore
import HeraldHTTP
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Logging
import Testing

/// Nodes sharing one PostgreSQL database: a live node's id is not taken by another, and
/// credentials made through one node's store are found at once by another.
@Suite(.enabled(if: TestPostgres.location != nil, "needs PostgreSQL: run scripts/test"))
struct SharedNodeTests {
    @Test
    func aLiveNodesIdIsRefusedWithItsAddressAndAStaleOneIsTakenOver() async throws {
        let live = try await TestPostgres.store("shared-id", address: "host a, HTTP 127.0.0.1:8001")
        let clock = SystemClock()
        let beating = Task {
            while !Task.isCancelled {
                _ = try await live.heartbeat(now: clock.now(), deadAfterMilliseconds: 5_000)
                try await Task.sleep(for: .milliseconds(200))
            }
        }
        defer { beating.cancel() }
        try await Task.sleep(for: .milliseconds(300))
        let second = try await TestPostgres.store("shared-id", address: "host b", sharing: live)
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
        let other = try await TestPostgres.store("other-id", sharing: live)
        #expect(try await other.node("shared-id")?.heartbeatAt == Timestamp(milliseconds: 0))
    }

    @Test
    func C1_aProjectCreatedThroughAnotherNodesStoreIsFoundAtOnce() async throws {
        let mine = try await TestPostgres.store("a")
        let theirs = try await TestPostgres.store("b", sharing: mine)
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
