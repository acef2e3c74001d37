import Foundation
import HeraldCore
import HeraldHTTP
import HeraldServer
import HeraldStorage
import Testing

/// The in-memory credential directory: a project made a moment ago is found on its first
/// request, and a flood of unknown keys makes only a few looks in the store each second.
@Suite struct CredentialDirectoryTests {
    @Test func C1_aProjectCreatedAfterTheLastReloadIsFoundAtOnce() async throws {
        let store = InMemoryStore()
        let clock = ManualClock()
        let directory = CredentialDirectory(store: store, clock: clock)
        try await directory.reload(from: store, force: true)
        let issued = try await ProjectAdministration(store: store).createProject(
            id: "late", publicURL: "http://127.0.0.1:1", keyFileDirectory: NSTemporaryDirectory())
        #expect(directory.project(named: "late") == nil)
        #expect(await directory.find { $0.project(named: "late") }?.apiKey == issued.project.apiKey)
        #expect(await directory.find { $0.project(number: issued.project.number) }?.id == "late")
        #expect(await directory.find { $0.activeKey(id: issued.key.id) } != nil)
    }

    @Test func C1_unknownKeysLookInTheStoreAtMostAFewTimesASecond() async throws {
        let store = InMemoryStore()
        let clock = ManualClock()
        let directory = CredentialDirectory(store: store, clock: clock, looksAfterMissPerSecond: 2)
        try await directory.reload(from: store, force: true)
        for _ in 0..<50 { #expect(await directory.find { $0.project(serverKey: "AAAA-unknown") } == nil) }
        // The second's looks are spent: a project created now is found only in the next second.
        _ = try await ProjectAdministration(store: store).createProject(
            id: "later", publicURL: "http://127.0.0.1:1", keyFileDirectory: NSTemporaryDirectory())
        #expect(await directory.find { $0.project(named: "later") } == nil)
        clock.advance(seconds: 1)
        #expect(await directory.find { $0.project(named: "later") } != nil)
    }
}
