import AsyncHTTPClient
public import HeraldCore
public import HeraldStorage
public import HeraldTelemetry
public import Logging
import Synchronization

/// The FCM part of the hand-off (SEMANTICS R1–R6): sends one project's entries for tokens
/// Herald did not issue to FCM's `messages:send`, over one HTTP/2 connection a project with
/// the project's access token, and says what became of each by FCM's answer.
final class FCMHandOffs: Sendable {
    /// A project's way to FCM: its key, the connection and the access token made with it.
    struct Link: Sendable {
        var credential: FCMRelayCredential
        var connection: HTTP2Connection
        var token: FCMAccessToken
    }

    private let environment: HandOffEnvironment
    /// The client the access tokens are obtained with (once an hour a project).
    private let client: HTTPClient
    private let lane: HandOffLane<String, FCMRelayCredential>
    private let links = Mutex<[String: Link]>([:])
    private let credentials = CredentialCache<FCMRelayCredential?>()

    init(environment: HandOffEnvironment) {
        self.environment = environment
        var client = HTTPClient.Configuration()
        client.tlsConfiguration = HTTP2Connection.clientTLS(trustRoots: environment.configuration.trustRoots)
        client.redirectConfiguration = .disallow
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
        lane = HandOffLane(
            naming: .init(
                metric: "fcm", refusalLine: "fcm refuses the project's relay key; its hand-offs wait",
                goneLine: "fcm token unregistered",
                refusalError: { _, reason in "FCM refused the project's relay key: \(reason)." },
                metadata: { _ in [:] }),
            environment: environment)
    }

    func shutdown() async {
        for link in links.withLock({ Array($0.values) }) { await link.connection.shutdown() }
        try? await client.shutdown()
    }

    /// Sends one project's entries, unless its pacing holds them back.
    func forward(_ handOffs: [HandOff], projectID: String, now: Timestamp) async -> HandOffOutcome {
        var outcome = HandOffOutcome()
        let (credential, held) = await lane.credential(for: handOffs, key: projectID, projectID: projectID, now: now) {
            try await credentials.value(projectID: projectID, now: now) {
                try await environment.store.fcmRelayCredential(projectID: projectID)
            }
        }
        if let held { return held }
        guard let credential else {
            lane.refuse(
                handOffs, key: projectID, projectID: projectID, credential: nil, reason: "no FCM relay key", now: now,
                into: &outcome)
            return outcome
        }
        let link: Link
        let token: String
        do {
            link = try await self.link(projectID: projectID, credential: credential)
            token = try await link.token.value(now: now)
        } catch let failure as FCMAccessToken.Failure where !failure.isRefusal {
            lane.unreachable(handOffs, key: projectID, now: now, into: &outcome)
            return outcome
        } catch {
            lane.refuse(
                handOffs, key: projectID, projectID: projectID, credential: credential, reason: "\(error)", now: now,
                into: &outcome)
            return outcome
        }
        let verdicts = await send(handOffs, link: link, token: token, now: now)
        if lane.settle(verdicts, key: projectID, projectID: projectID, credential: credential, now: now, into: &outcome)
        {
            link.token.forget(token)
        }
        return outcome
    }

    /// FCM's verdicts on entries, sent as one batch.
    private func send(_ handOffs: [HandOff], link: Link, token: String, now: Timestamp) async
        -> [(HandOff, HandOffVerdict)]
    {
        var verdicts: [(HandOff, HandOffVerdict)] = []
        var sendable: [(HandOff, HTTP2Connection.Request)] = []
        let path = "/v1/projects/\(link.credential.googleProjectID)/messages:send"
        let headers = [
            ("content-type", "application/json"), ("authorization", "Bearer " + token),
            (SendRequest.handOffHeader, "1"),
        ]
        // A fanout's entries come in a row with one stanza: each is read once.
        var last: (stanza: [UInt8], template: FCMRequest.Template)?
        for handOff in handOffs {
            let stanza = handOff.entry.stanza
            let known = last.flatMap { $0.stanza == stanza ? $0.template : nil }
            guard let template = known ?? (try? FCMRequest.Template(stanza: stanza)) else {
                verdicts.append((handOff, .refused(reason: "not a message for FCM")))
                continue
            }
            last = (stanza, template)
            let body = FCMRequest(handOff.entry, template: template, now: now).body
            sendable.append((handOff, HTTP2Connection.Request(path: path, headers: headers, body: body)))
        }
        let answers = await link.connection.send(sendable.map(\.1))
        for ((handOff, _), answer) in zip(sendable, answers) { verdicts.append((handOff, HandOffVerdict(answer))) }
        return verdicts
    }

    /// The project's link, made again when its key changed.
    private func link(projectID: String, credential: FCMRelayCredential) async throws -> Link {
        if let current = links.withLock({ $0[projectID] }), current.credential == credential { return current }
        let made = Link(
            credential: credential,
            connection: try HTTP2Connection(
                baseURL: environment.configuration.fcmURL,
                tls: HTTP2Connection.clientTLS(trustRoots: environment.configuration.trustRoots)),
            token: FCMAccessToken(credential: credential, client: client))
        let replaced = links.withLock { links in
            let old = links[projectID]
            links[projectID] = made
            return old
        }
        if let replaced { await replaced.connection.shutdown() }
        return made
    }
}
