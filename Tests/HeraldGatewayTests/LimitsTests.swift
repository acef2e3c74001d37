import Foundation
import HeraldClient
import HeraldCore
import HeraldDelivery
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Synchronization
import Testing

@testable import HeraldTools

/// SEMANTICS T1, T2, T6 and overload, through a whole node with a manual clock.
@Suite struct LimitsTests {
    func json(_ result: HTTPResult) throws -> JSONValue { try JSONParser.parse(result.body) }

    func data(_ token: String) -> String { #"{"token":"\#(token)","data":{"k":"v"}}"# }

    @Test func T1_theDownstreamQuotaSlidesCountsClientErrorsAndNot429s() async throws {
        let clock = ManualClock()
        // Not aligned to a clock minute.
        clock.advance(milliseconds: 30_050)
        try await GatewayHarness.with(clock: clock, settings: { $0.downstreamPerMinute = 3 }) { harness in
            let (_, token) = try await harness.makeDevice()
            #expect(try await harness.sendRequest(data(token)).status == 200)
            // A client error counts against the quota.
            #expect(try await harness.sendRequest(#"{"token":"\#(token)","data":{"from":"x"}}"#).status == 400)
            clock.advance(seconds: 20)
            #expect(try await harness.sendRequest(data(token)).status == 200)
            let refused = try await harness.sendRequest(data(token))
            #expect(refused.status == 429)
            let error = try json(refused)["error"]
            #expect(error?["status"] == .string("RESOURCE_EXHAUSTED"))
            let details = error?["details"]?.arrayElements ?? []
            #expect(details.contains { $0["errorCode"] == .string("QUOTA_EXCEEDED") })
            #expect(details.contains { $0["@type"] == .string("type.googleapis.com/google.rpc.QuotaFailure") })
            // The first two leave the window one minute (and at most two 10 ms buckets) after they came.
            #expect(refused.headers.first(name: "Retry-After") == "41")
            // A refusal does not count: just before the first two leave, still refused; just after, room for two.
            clock.advance(milliseconds: 39_999)
            #expect(try await harness.sendRequest(data(token)).status == 429)
            clock.advance(milliseconds: 101)
            #expect(try await harness.sendRequest(data(token)).status == 200)
            #expect(try await harness.sendRequest(data(token)).status == 200)
            #expect(try await harness.sendRequest(data(token)).status == 429)
        }
    }

    @Test func T1_theQuotaIsASettingAppliedWithoutARestart() async throws {
        let clock = ManualClock()
        try await GatewayHarness.with(clock: clock, settings: { $0.downstreamPerMinute = 1 }) { harness in
            let (_, token) = try await harness.makeDevice()
            #expect(try await harness.sendRequest(data(token)).status == 200)
            #expect(try await harness.sendRequest(data(token)).status == 429)
            var settings = harness.project.settings
            settings.downstreamPerMinute = 5
            _ = try await harness.node.store.updateSettings(settings, projectID: harness.project.id)
            try await harness.node.directory.reload(from: harness.node.store)
            #expect(try await harness.sendRequest(data(token)).status == 200)
        }
    }

    @Test func T1_refusalsPastTheQuotaLeaveTheConnectionUsable() async throws {
        try await GatewayHarness.with(clock: ManualClock(), settings: { $0.downstreamPerMinute = 1 }) { harness in
            let (_, token) = try await harness.makeDevice()
            let access = try await harness.credentials.accessToken(now: harness.node.clock.now())
            let headers = [("Authorization", "Bearer \(access)"), ("Content-Type", "application/json")]
            let send = "/v1/projects/\(harness.project.id)/messages:send"
            let body = Array(#"{"message":\#(data(token))}"#.utf8)
            try await HTTPConnection.with(host: "127.0.0.1", port: harness.httpPort) { connection in
                #expect(try await connection.request(.POST, send, headers: headers, body: body).status == 200)
                // The router refuses the first; the event loop answers the next ones, alike.
                let first = try await connection.request(.POST, send, headers: headers, body: body)
                let second = try await connection.request(.POST, send, headers: headers, body: body)
                #expect(first.status == 429)
                #expect(second.status == 429)
                #expect(second.body == first.body)
                #expect(second.headers.first(name: "Retry-After") == first.headers.first(name: "Retry-After"))
                // The refused requests' bodies were read: the connection still serves requests.
                let info = try await connection.request(.GET, "/iid/info/\(token)", headers: headers, body: [])
                #expect(info.status == 200)
            }
            // Both refusals counted alike, under the router's label.
            let metrics = harness.node.environment.renderMetrics()
            #expect(
                metrics.contains(
                    #"herald_http_requests_total{route="/v1/projects/{project}/messages:send",status="429"} 2"#),
                "\(metrics.split(separator: "\n").filter { $0.contains("status=\"429\"") })")
        }
    }

    @Test func T2_topicChangesPastTheRateAreRefusedPerAPIGeneration() async throws {
        let clock = ManualClock()
        try await GatewayHarness.with(clock: clock, settings: { $0.topicOpsPerSecond = 2 }) { harness in
            let (_, first) = try await harness.makeDevice()
            let (_, second) = try await harness.makeDevice()
            let (_, third) = try await harness.makeDevice()
            let body = #"{"to":"/topics/news","registration_tokens":["\#(first)","\#(second)","\#(third)"]}"#
            let added = try json(try await harness.get("/iid/v1:batchAdd", method: .POST, body: body))
            #expect(
                added["results"]
                    == .array([.object([]), .object([]), .stringObject([("error", "RESOURCE_EXHAUSTED")])]))
            #expect(try await harness.node.store.subscriptions(token: third).isEmpty)
            let resource = "/v1/projects/\(harness.project.id)/registrations/\(third)/topicSubscriptions"
            let refused = try await harness.get(resource + "?topic_name=news", method: .POST)
            #expect(refused.status == 429)
            #expect(try json(refused)["error"]?["status"] == .string("RESOURCE_EXHAUSTED"))
            // The second's changes are gone two 100 ms buckets after it at the latest.
            clock.advance(milliseconds: 1_200)
            #expect(try await harness.get(resource + "?topic_name=news", method: .POST).status == 200)
            #expect(try await harness.node.store.subscriptions(token: third).map(\.topic) == ["news"])
        }
    }

    @Test func T6_oneAppInstanceIsLimitedPerMinuteAndPerHour() async throws {
        let clock = ManualClock()
        try await GatewayHarness.with(
            clock: clock,
            settings: {
                $0.devicePerMinute = 2
                $0.devicePerHour = 3
            }
        ) { harness in
            let (_, token) = try await harness.makeDevice()
            let (_, other) = try await harness.makeDevice()
            #expect(try await harness.sendRequest(data(token)).status == 200)
            #expect(try await harness.sendRequest(data(token)).status == 200)
            let refused = try await harness.sendRequest(data(token))
            #expect(refused.status == 429)
            #expect(
                try json(refused)["error"]?["details"]?.arrayElements?.contains {
                    $0["errorCode"] == .string("QUOTA_EXCEEDED")
                } == true)
            // Another app instance is not affected.
            #expect(try await harness.sendRequest(data(other)).status == 200)
            // A minute and its leaving 1 s bucket later.
            clock.advance(seconds: 62)
            #expect(try await harness.sendRequest(data(token)).status == 200)
            clock.advance(seconds: 62)
            // Room in the minute, none in the hour.
            #expect(try await harness.sendRequest(data(token)).status == 429)
            clock.advance(seconds: 3_600)
            #expect(try await harness.sendRequest(data(token)).status == 200)
        }
    }

    @Test func aSaturatedNodeAnswers503WithRetryAfterAndRecovers() async throws {
        try await GatewayHarness.with { harness in
            let (_, token) = try await harness.makeDevice()
            let gate = harness.node.environment.admission.sends
            var taken = 0
            while gate.enter() { taken += 1 }
            let refused = try await harness.sendRequest(data(token))
            #expect(refused.status == 503)
            #expect(try json(refused)["error"]?["status"] == .string("UNAVAILABLE"))
            #expect(refused.headers.first(name: "Retry-After") == "1")
            for _ in 0..<taken { gate.leave() }
            #expect(try await harness.sendRequest(data(token)).status == 200)
        }
    }
}

/// Quotas counted over several nodes: what other nodes counted comes in through
/// `setRemoteCounts` (every 200 ms in a cluster) or, for one app instance, from the store.
@Suite struct SharedQuotaTests {
    func project(_ change: (inout ProjectSettings) -> Void) -> Project {
        var project = Project(
            id: "shared", number: 1, apiKey: "a", serverKey: "s", createdAt: Timestamp(seconds: 0))
        change(&project.settings)
        return project
    }

    /// Admits `count` sends of the project at `now`, and expects the next one refused.
    func admitsExactly(_ count: Int, _ quotas: Quotas, _ project: Project, at now: Timestamp) throws {
        for _ in 0..<count { try quotas.admitDownstream(project, now: now) }
        #expect(throws: HeraldError.self) { try quotas.admitDownstream(project, now: now) }
    }

    @Test func T1_otherNodesMessagesCountAgainstTheProjectQuotaUntilTheyLeaveTheWindow() throws {
        let quotas = Quotas()
        let project = project { $0.downstreamPerMinute = 10 }
        let now = Timestamp(milliseconds: 1_000_050)
        quotas.setRemoteCounts(
            .downstream, [QuotaCount(projectID: "shared", bucket: 990_000, count: 7)], now: now)
        try admitsExactly(3, quotas, project, at: now)
        // What this node counted is what it reports, by bucket.
        #expect(
            quotas.localCounts(.downstream, now: now) == [QuotaCount(projectID: "shared", bucket: 1_000_000, count: 3)])
        // The other nodes' seven leave over their 100 ms bucket's length, a window after it;
        // this node's three stay.
        let later = Timestamp(milliseconds: 1_050_200)
        try admitsExactly(7, quotas, project, at: later)
    }

    @Test func T1_aProjectAtItsQuotaGetsRoomBackAsSteadilyAsItsSendsLeftAndTellsOtherNodesPerTenth() throws {
        let quotas = Quotas()
        let project = project { $0.downstreamPerMinute = 100 }
        let start = Timestamp(milliseconds: 1_000_000)
        for millisecond in 0..<100 {
            try quotas.admitDownstream(project, now: start.adding(milliseconds: Int64(millisecond)))
        }
        #expect(
            quotas.localCounts(.downstream, now: start.adding(milliseconds: 100)) == [
                QuotaCount(projectID: "shared", bucket: 1_000_000, count: 100)
            ])
        #expect(quotas.downstreamRefusal(project, now: start.adding(milliseconds: 60_009)) != nil)
        // The sends of the first 10 ms (one a millisecond) leave over the next 10 ms, one a
        // millisecond: two have left 2 ms in, and all ten at its end.
        let early = start.adding(milliseconds: 60_012)
        try admitsExactly(2, quotas, project, at: early)
        try admitsExactly(8, quotas, project, at: start.adding(milliseconds: 60_020))
    }

    /// Sends of a project refused lately are worth answering early (`QuotaRefusalHandler`):
    /// it stays marked until room comes back, and at least for a second, as room in a full
    /// window comes back a little at a time.
    @Test func T1_aRefusedProjectStaysMarkedUntilRoomComesBackAndForASecondAtLeast() throws {
        let quotas = Quotas()
        let project = project { $0.downstreamPerMinute = 10 }
        let start = Timestamp(milliseconds: 1_000_000)
        try quotas.admitDownstream(project, count: 10, now: start)
        #expect(!quotas.isRefusingDownstream(projectID: "shared", now: start))
        #expect(quotas.downstreamRefusal(project, now: start.adding(milliseconds: 30_000)) != nil)
        #expect(quotas.isRefusingDownstream(projectID: "shared", now: start.adding(milliseconds: 60_000)))
        // One has left 1 ms into the leaving: room for one, then a refusal a millisecond from room.
        let room = start.adding(milliseconds: 60_011)
        try admitsExactly(1, quotas, project, at: room)
        #expect(quotas.isRefusingDownstream(projectID: "shared", now: room.adding(milliseconds: 999)))
        // The one admission of a send says how its project stands: refused lately while
        // marked, within its quota after.
        #expect(try quotas.admitDownstream(project, now: room.adding(milliseconds: 999)) == .refusedLately)
        #expect(!quotas.isRefusingDownstream(projectID: "shared", now: room.adding(milliseconds: 1_000)))
        #expect(try quotas.admitDownstream(project, now: room.adding(milliseconds: 1_000)) == .withinQuota)
    }

    /// A send refunded after its work (a 429 or a server error) is taken back from the
    /// bucket it was counted in, though other sends were counted in newer buckets since.
    @Test func T1_aRefundTakesTheSendBackFromTheBucketItWasCountedIn() throws {
        let quotas = Quotas()
        let project = project { $0.downstreamPerMinute = 2 }
        let start = Timestamp(milliseconds: 1_000_000)
        try quotas.admitDownstream(project, now: start)
        try quotas.admitDownstream(project, now: start.adding(milliseconds: 50))
        quotas.refundDownstream(projectID: "shared", at: start)
        #expect(
            quotas.localCounts(.downstream, now: start.adding(milliseconds: 60)) == [
                QuotaCount(projectID: "shared", bucket: 1_000_000, count: 1)
            ])
        // The first send's bucket has left a minute on; the second's still counts.
        try admitsExactly(1, quotas, project, at: start.adding(milliseconds: 60_030))
    }

    /// The early check lets a send through only with room for it beside the sends it let
    /// through before whose answers have not ended (`QuotaRefusalHandler` ends them).
    @Test func T1_sendsLetThroughEarlyHoldTheirRoomUntilTheirAnswersEnd() throws {
        let quotas = Quotas()
        let project = project { $0.downstreamPerMinute = 3 }
        let now = Timestamp(milliseconds: 1_000_000)
        try quotas.admitDownstream(project, now: now)
        #expect(quotas.passOnDownstream(project, now: now) == nil)
        #expect(quotas.passOnDownstream(project, now: now) == nil)
        #expect(quotas.passOnDownstream(project, now: now) != nil)
        // The route counts one of them; until its answer ends it holds room twice, so the
        // early check errs towards the route.
        try quotas.admitDownstream(project, now: now)
        quotas.endPassedOn(projectID: "shared")
        #expect(quotas.passOnDownstream(project, now: now) != nil)
        // The other was given back (a 429 or a server error): its room is free again.
        quotas.endPassedOn(projectID: "shared")
        #expect(quotas.passOnDownstream(project, now: now) == nil)
        // More sends on their way than the limit: room for one alone is not enough.
        let small = self.project { $0.downstreamPerMinute = 1 }
        let other = Quotas()
        #expect(other.passOnDownstream(small, now: now) == nil)
        let refusal = other.passOnDownstream(small, now: now)
        #expect(refusal?.retryAfterSeconds == 1)
        other.endPassedOn(projectID: "shared")
        other.endPassedOn(projectID: "shared")
        #expect(other.passOnDownstream(small, now: now) == nil)
        // Nothing was counted by passing on.
        #expect(other.downstreamRefusal(small, now: now) == nil)
    }

    @Test func T2_otherNodesTopicChangesShareTheSecond() {
        let quotas = Quotas()
        let project = project { $0.topicOpsPerSecond = 5 }
        let now = Timestamp(milliseconds: 2_000_000)
        quotas.setRemoteCounts(
            .topicOperations, [QuotaCount(projectID: "shared", bucket: 1_999_900, count: 4)], now: now)
        #expect(quotas.admitTopicOperations(project, requested: 3, now: now) == 1)
        #expect(quotas.admitTopicOperations(project, requested: 3, now: now.adding(milliseconds: 1_200)) == 3)
    }

    @Test func T6_messagesEveryNodeStoredForAnAppInstanceCount() throws {
        let quotas = Quotas()
        let project = project {
            $0.devicePerMinute = 3
            $0.devicePerHour = 5
        }
        let now = Timestamp(seconds: 10_000)
        try quotas.checkDeviceMessage(
            recent: RecentMessages(minute: 2, hour: 4, oldestInMinute: now, oldestInHour: now), project: project,
            now: now)
        do {
            try quotas.checkDeviceMessage(
                recent: RecentMessages(
                    minute: 3, hour: 3, oldestInMinute: now.adding(milliseconds: -20_000), oldestInHour: nil),
                project: project, now: now)
            Issue.record("the minute limit was not applied")
        } catch {
            #expect(error.retryAfterSeconds == 40)
        }
        do {
            try quotas.checkDeviceMessage(
                recent: RecentMessages(
                    minute: 1, hour: 5, oldestInMinute: now, oldestInHour: now.adding(milliseconds: -600_000)),
                project: project, now: now)
            Issue.record("the hour limit was not applied")
        } catch {
            #expect(error.retryAfterSeconds == 3_000)
        }
    }
}
