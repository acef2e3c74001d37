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
    private let pacing = Mutex<[String: HandOffPacing<FCMRelayCredential>]>([:])
    private let links = Mutex<[String: Link]>([:])
    private let credentials = Mutex<[String: (readAt: Timestamp, credential: FCMRelayCredential?)]>([:])

    init(environment: HandOffEnvironment) {
        self.environment = environment
        var client = HTTPClient.Configuration()
        client.tlsConfiguration = HTTP2Connection.clientTLS(trustRoots: environment.configuration.trustRoots)
        client.redirectConfiguration = .disallow
        self.client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: client)
    }

    func shutdown() async {
        for link in links.withLock({ Array($0.values) }) { await link.connection.shutdown() }
        try? await client.shutdown()
    }

    /// Sends one project's entries, unless its pacing holds them back.
    func forward(_ handOffs: [HandOff], projectID: String, now: Timestamp) async -> HandOffOutcome {
        var outcome = HandOffOutcome()
        let credential = await credential(projectID: projectID, now: now)
        let admission = pacing.withLock {
            $0[projectID, default: HandOffPacing()].admission(credential: credential, now: now)
        }
        if case .wait(let until, _) = admission {
            outcome.deferred[until, default: []] += handOffs.map(\.entry.sequence)
            return outcome
        }
        guard let credential else {
            refuse(
                handOffs, projectID: projectID, credential: nil, reason: "no FCM relay key", now: now, into: &outcome)
            return outcome
        }
        let link: Link
        let token: String
        do {
            link = try self.link(projectID: projectID, credential: credential)
            token = try await link.token.value(now: now)
        } catch let failure as FCMAccessToken.Failure where !failure.isRefusal {
            let at = pacing.withLock {
                $0[projectID, default: HandOffPacing()].failed(now: now, jitter: .random(in: 0..<1))
            }
            environment.metrics.increment("herald_fcm_hand_offs_total", [("outcome", "retry")], by: handOffs.count)
            outcome.deferred[at, default: []] += handOffs.map(\.entry.sequence)
            return outcome
        } catch {
            refuse(
                handOffs, projectID: projectID, credential: credential, reason: "\(error)", now: now, into: &outcome)
            return outcome
        }
        let verdicts = await send(handOffs, link: link, token: token, now: now)
        var retried: [Int64] = []
        var renewed: [Int64] = []
        var wait: (retryAfter: Int64?, atLeast: Int64) = (nil, 0)
        var refusedReason: String?
        for (handOff, verdict) in verdicts {
            switch verdict {
            case .delivered:
                outcome.delivered[handOff.entry.androidID, default: []].append(handOff.entry.persistentID)
            case .unregistered(let reason):
                outcome.unregistered.append(handOff.entry.token)
                environment.logger.info(
                    "fcm token unregistered",
                    metadata: [
                        "project": "\(projectID)", "token": "\(Registration.redacted(handOff.entry.token))",
                        "reason": "\(reason)",
                    ])
            case .refused(let reason):
                outcome.dropped.append(handOff.entry)
                environment.logger.warning(
                    "fcm refused a message",
                    metadata: [
                        "project": "\(projectID)", "message": "\(handOff.entry.messageID)", "reason": "\(reason)",
                    ])
            case .retry(_, let retryAfter, let atLeast):
                retried.append(handOff.entry.sequence)
                wait = (max(wait.retryAfter ?? 0, retryAfter ?? 0), max(wait.atLeast, atLeast))
            case .renewToken:
                renewed.append(handOff.entry.sequence)
            case .credentialRefused(let reason):
                refusedReason = reason
                retried.append(handOff.entry.sequence)
            }
            environment.metrics.increment("herald_fcm_hand_offs_total", [("outcome", verdict.outcome)])
        }
        if !renewed.isEmpty {
            link.token.forget(token)
            outcome.deferred[now.adding(seconds: 1), default: []] += renewed
        }
        if let refusedReason {
            let held = Set(retried)
            let waiting = handOffs.filter { held.contains($0.entry.sequence) }
            refuse(
                waiting, projectID: projectID, credential: credential, reason: refusedReason, now: now, into: &outcome)
        } else if !retried.isEmpty {
            // FCM turned the project away (all of a batch, or a quota): back off, with jitter,
            // no sooner than it asked.
            let at = pacing.withLock { pacing in
                if retried.count < handOffs.count, wait.atLeast == 0 {
                    pacing[projectID, default: HandOffPacing()].reached()
                }
                return pacing[projectID, default: HandOffPacing()].failed(
                    now: now, retryAfterSeconds: wait.retryAfter, atLeastSeconds: wait.atLeast,
                    jitter: .random(in: 0..<1))
            }
            outcome.deferred[at, default: []] += retried
        } else {
            pacing.withLock { $0[projectID, default: HandOffPacing()].reached() }
        }
        return outcome
    }

    /// Holds a project's entries back while its key is refused or missing: one log line and
    /// one counted error when the refusal starts, a metric for each entry held.
    private func refuse(
        _ handOffs: [HandOff], projectID: String, credential: FCMRelayCredential?, reason: String, now: Timestamp,
        into outcome: inout HandOffOutcome
    ) {
        let isNew = pacing.withLock {
            $0[projectID, default: HandOffPacing()].credentialRefused(credential, reason: reason, now: now)
        }
        if isNew {
            environment.logger.error(
                "fcm refuses the project's relay key; its hand-offs wait",
                metadata: ["project": "\(projectID)", "reason": "\(reason)"])
            environment.countError(
                HeraldError(
                    status: .unauthenticated, fcmCode: .thirdPartyAuthError,
                    message: "FCM refused the project's relay key: \(reason)."), projectID, now)
        }
        environment.metrics.increment("herald_fcm_credential_refusals_total", by: handOffs.count)
        outcome.deferred[now.adding(seconds: HandOffPacing<FCMRelayCredential>.pausedRecheckSeconds), default: []] +=
            handOffs.map(\.entry.sequence)
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

    /// The project's key, read from the store at most once a second.
    private func credential(projectID: String, now: Timestamp) async -> FCMRelayCredential? {
        if let known = credentials.withLock({ cache in
            cache[projectID].flatMap { now.milliseconds - $0.readAt.milliseconds < 1000 ? $0 : nil }
        }) {
            return known.credential
        }
        let read = try? await environment.store.fcmRelayCredential(projectID: projectID)
        credentials.withLock { $0[projectID] = (now, read) }
        return read
    }

    /// The project's link, made again when its key changed.
    private func link(projectID: String, credential: FCMRelayCredential) throws -> Link {
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
        if let replaced { Task { await replaced.connection.shutdown() } }
        return made
    }
}
