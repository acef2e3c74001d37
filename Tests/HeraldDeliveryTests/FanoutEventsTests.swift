import Foundation
import HeraldCore
import HeraldDelivery
import HeraldStorage
import HeraldTestSupport
import Testing

/// What becomes of a topic message's app instances (SEMANTICS E2, E3): counted for the
/// message, and kept each only when the project asks.
@Suite struct FanoutEventsTests {
    /// Each subscriber's persistent id for `message` (the fanout engine's).
    func persistentIDs(_ tokens: some Sequence<String>, message: String, _ store: any HeraldStore) async throws
        -> [UInt64: [String]]
    {
        var batch: [UInt64: [String]] = [:]
        for token in tokens {
            let registration = try #require(try await store.registration(token: token))
            batch[registration.androidID, default: []].append(message + "#" + token.prefix(22))
        }
        return batch
    }

    @Test func E3_aTopicOfTenThousandSubscribersCountsAddUpAsTheyAreDeliveredAndExpire() async throws {
        let directory = createdTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try SQLiteStore(dataDirectory: directory)
        let world = try await FanoutEngineTests.world(store)
        let tokens = try await world.subscribers(10_000, topics: ["news"])
        let engine = world.engine(pageSize: 1000)
        let job = try await world.job("m1", .topic("news"))
        await engine.submit(job)
        while try await engine.step() != nil {}
        let planned = try #require(try await store.messageStatus(projectID: world.project.id, messageID: "m1"))
        #expect(planned.instances == 10_000 && planned.waiting == 10_000 && planned.fanout?.finished == true)
        #expect(planned.state(now: world.clock.now()) == .delivering)
        try await store.acknowledge(batch: try await persistentIDs(tokens.prefix(2_500), message: "m1", store))
        let half = try #require(try await store.messageStatus(projectID: world.project.id, messageID: "m1"))
        #expect(half[.delivered] == 2_500 && half.waiting == 7_500)
        // Counted, not kept each: the message has its accepted event alone.
        let events = try await store.events(
            projectID: world.project.id, after: 0, limit: 100, filter: EventFilter(messageID: "m1"))
        #expect(events.map(\.type) == [.accepted])
        while try await store.deleteExpired(now: job.expiresAt, limit: 5_000) > 0 {}
        let end = try #require(try await store.messageStatus(projectID: world.project.id, messageID: "m1"))
        #expect(end[.delivered] == 2_500 && end[.expired] == 7_500 && end.waiting == 0)
        #expect(end[.delivered] + end[.expired] == end.instances)
        #expect(end.state(now: job.expiresAt) == .expired)
    }

    @Test func E2_aProjectThatAsksKeepsEachAppInstancesOutcomeAsAnEvent() async throws {
        let world = try await FanoutEngineTests.world(InMemoryStore()) { $0.perDeviceEvents = true }
        let tokens = try await world.subscribers(5, topics: ["news"])
        let engine = world.engine(pageSize: 2)
        await engine.submit(try await world.job("m1", .topic("news")))
        while try await engine.step() != nil {}
        try await world.store.acknowledge(batch: try await persistentIDs(tokens, message: "m1", world.store))
        let events = try await world.store.events(
            projectID: world.project.id, after: 0, limit: 100, filter: EventFilter(messageID: "m1"))
        #expect(events.map(\.type) == [.accepted] + Array(repeating: .delivered, count: 5))
        #expect(Set(events.dropFirst().map(\.token)) == Set(tokens.map(Registration.redacted)))
        #expect(try await world.store.messageStatus(projectID: world.project.id, messageID: "m1")?[.delivered] == 5)
    }
}
