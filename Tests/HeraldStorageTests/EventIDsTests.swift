import HeraldCore
import HeraldStorage
import Testing

/// SEMANTICS E4: an event's id tells nothing of other projects' events.
@Suite struct EventIDsTests {
    let ids = EventIDs(secret: Array(repeating: 7, count: 32))

    @Test func E4_anIdIsOpaqueStableAndReadBackOnlyInItsProject() {
        let first = ids.id(sequence: 37, projectID: "alpha")
        let next = ids.id(sequence: 38, projectID: "alpha")
        #expect(first == ids.id(sequence: 37, projectID: "alpha"))
        #expect(first.count == 22 && !first.contains("37"))
        #expect(first != next)
        #expect(ids.sequence(of: first, projectID: "alpha") == 37)
        #expect(ids.sequence(of: next, projectID: "alpha") == 38)
        // A project's ids made once for many events are the same ids.
        let alpha = ids.project("alpha")
        let event = MessageEvent(
            sequence: 37, type: .accepted, projectID: "alpha", messageID: "m", at: .init(seconds: 0))
        #expect(alpha.id(sequence: 37) == first && alpha.json(event)["id"] == .string(first))
        // The same position in another project is another id, and one project's id is
        // refused by another, not read as a position.
        #expect(ids.id(sequence: 37, projectID: "beta") != first)
        #expect(ids.sequence(of: first, projectID: "beta") == nil)
        // Another node's secret makes other ids.
        #expect(EventIDs(secret: Array(repeating: 8, count: 32)).sequence(of: first, projectID: "alpha") == nil)
    }

    @Test func E4_aChangedOrMalformedIdIsRefusedAndADecimalOneIsTakenAsBefore() {
        var changed = Array(ids.id(sequence: 5, projectID: "alpha"))
        changed[3] = changed[3] == "A" ? "B" : "A"
        #expect(ids.sequence(of: String(changed), projectID: "alpha") == nil)
        for malformed in ["", "abc", "!!!!", String(repeating: "A", count: 40), "-1"] {
            #expect(ids.sequence(of: malformed, projectID: "alpha") == nil)
        }
        #expect(ids.sequence(of: "42", projectID: "alpha") == 42)
        #expect(ids.sequence(of: "0", projectID: "alpha") == 0)
    }

    @Test func E4_theIdsOfAProjectKeepTheirEventsThroughTheStoresSecret() async throws {
        let store = InMemoryStore()
        let first = try await EventIDs.load(from: store)
        let again = try await EventIDs.load(from: store)
        #expect(again.id(sequence: 9, projectID: "alpha") == first.id(sequence: 9, projectID: "alpha"))
    }
}
