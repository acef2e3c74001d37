public import HeraldCore
public import HeraldStorage
public import HeraldTelemetry
public import Logging
import Synchronization

/// The APNs part of the hand-off (SEMANTICS A1–A4): sends one project's entries for one
/// environment over its connection, and says what became of each by APNs' answer. A retry
/// carries the same `apns-id`.
final class APNsHandOffs: Sendable {
    /// A project's connection for one environment.
    struct PoolKey: Hashable {
        var projectID: String
        var isSandbox: Bool
    }

    private let environment: HandOffEnvironment
    private let pacing = Mutex<[PoolKey: HandOffPacing<APNsCredential>]>([:])
    private let connections = Mutex<[PoolKey: APNsConnection]>([:])
    private let credentials = Mutex<[String: (readAt: Timestamp, credentials: [APNsCredential])]>([:])

    init(environment: HandOffEnvironment) {
        self.environment = environment
    }

    func shutdown() async {
        for connection in connections.withLock({ Array($0.values) }) { await connection.shutdown() }
    }

    /// Sends one project's entries for one environment, unless its pacing holds them back.
    func forward(_ handOffs: [HandOff], key: PoolKey, now: Timestamp) async -> HandOffOutcome {
        var outcome = HandOffOutcome()
        let credential = await credential(for: key, now: now)
        let admission = pacing.withLock {
            $0[key, default: HandOffPacing<APNsCredential>()].admission(credential: credential, now: now)
        }
        if case .wait(let until, _) = admission {
            outcome.deferred[until, default: []] += handOffs.map(\.entry.sequence)
            return outcome
        }
        guard let credential else {
            refuse(handOffs, key: key, credential: nil, reason: "no APNs credential", now: now, into: &outcome)
            return outcome
        }
        let connection: APNsConnection
        do {
            connection = try await self.connection(for: key, credential: credential)
        } catch {
            refuse(
                handOffs, key: key, credential: credential, reason: "unusable credential", now: now, into: &outcome)
            return outcome
        }
        let verdicts = await send(handOffs, over: connection, now: now)
        var retried: [Int64] = []
        var refusedReason: String?
        for (handOff, verdict) in verdicts {
            switch verdict {
            case .delivered:
                outcome.delivered[handOff.entry.androidID, default: []].append(handOff.entry.persistentID)
            case .unregistered(let reason):
                outcome.unregistered.append(handOff.entry.token)
                environment.logger.info(
                    "apns app instance unregistered",
                    metadata: [
                        "project": "\(key.projectID)", "apns": "\(handOff.apns?.redacted ?? "")", "reason": "\(reason)",
                    ])
            case .refused(let reason):
                outcome.dropped.append(handOff.entry)
                environment.logger.warning(
                    "apns refused a message",
                    metadata: [
                        "project": "\(key.projectID)", "message": "\(handOff.entry.messageID)", "reason": "\(reason)",
                    ])
            case .retry, .renewToken:
                retried.append(handOff.entry.sequence)
            case .credentialRefused(let reason):
                refusedReason = reason
                retried.append(handOff.entry.sequence)
            }
            environment.metrics.increment("herald_apns_hand_offs_total", [("outcome", verdict.outcome)])
        }
        if let refusedReason {
            let held = Set(retried)
            let waiting = handOffs.filter { held.contains($0.entry.sequence) }
            refuse(waiting, key: key, credential: credential, reason: refusedReason, now: now, into: &outcome)
        } else if !retried.isEmpty, retried.count == handOffs.count {
            let at = pacing.withLock { $0[key, default: HandOffPacing<APNsCredential>()].failed(now: now) }
            outcome.deferred[at, default: []] += retried
        } else {
            pacing.withLock { $0[key, default: HandOffPacing<APNsCredential>()].reached() }
            if !retried.isEmpty { outcome.deferred[now.adding(seconds: 1), default: []] += retried }
        }
        return outcome
    }

    /// Holds a project's entries back while APNs refuses its credential: one log line and
    /// one counted error when the refusal starts, a metric for each entry held.
    private func refuse(
        _ handOffs: [HandOff], key: PoolKey, credential: APNsCredential?, reason: String, now: Timestamp,
        into outcome: inout HandOffOutcome
    ) {
        let isNew = pacing.withLock {
            $0[key, default: HandOffPacing<APNsCredential>()].credentialRefused(credential, reason: reason, now: now)
        }
        if isNew {
            let apnsEnvironment = key.isSandbox ? "development" : "production"
            environment.logger.error(
                "apns refuses the project's credential; its messages wait",
                metadata: ["project": "\(key.projectID)", "environment": "\(apnsEnvironment)", "reason": "\(reason)"])
            environment.countError(
                HeraldError(
                    status: .unauthenticated, fcmCode: .thirdPartyAuthError,
                    message: "APNs refused the \(apnsEnvironment) credential: \(reason)."), key.projectID, now)
        }
        environment.metrics.increment("herald_apns_credential_refusals_total", [("reason", reason)], by: handOffs.count)
        outcome.deferred[now.adding(seconds: HandOffPacing<APNsCredential>.pausedRecheckSeconds), default: []] +=
            handOffs.map(\.entry.sequence)
    }

    /// APNs' verdicts on entries, sent as one batch; an expired provider token is made
    /// again once and the entries it refused sent again.
    private func send(_ handOffs: [HandOff], over connection: APNsConnection, now: Timestamp) async
        -> [(HandOff, HandOffVerdict)]
    {
        var verdicts: [(HandOff, HandOffVerdict)] = []
        var sendable: [(HandOff, APNsRequest)] = []
        // A fanout's entries come in a row with one stanza: each is read once.
        var last: (stanza: [UInt8], template: APNsRequest.Template)?
        for handOff in handOffs {
            // The app instance's own bundle id: one team's signing key serves all its apps.
            let bundleID =
                APNsCredential.isBundleID(handOff.entry.appID) ? handOff.entry.appID : connection.credential.bundleID
            let stanza = handOff.entry.stanza
            let known = last.flatMap { $0.stanza == stanza ? $0.template : nil }
            guard let template = known ?? (try? APNsRequest.Template(stanza: stanza)) else {
                verdicts.append((handOff, .refused(reason: "not an APNs message")))
                continue
            }
            last = (stanza, template)
            sendable.append((handOff, APNsRequest(handOff, bundleID: bundleID, template: template)))
        }
        var answers = await connection.send(sendable.map(\.1), now: now)
        let expired = answers.indices.filter {
            answers[$0].map { HandOffVerdict(status: $0.status, reason: $0.reason) } == .renewToken
        }
        if !expired.isEmpty, (try? await connection.renewToken(environment.clock.now())) == true {
            let again = await connection.send(expired.map { sendable[$0].1 }, now: environment.clock.now())
            for (index, answer) in zip(expired, again) { answers[index] = answer }
        }
        for ((handOff, _), answer) in zip(sendable, answers) {
            verdicts.append(
                (
                    handOff,
                    answer.map { HandOffVerdict(status: $0.status, reason: $0.reason) } ?? .retry(reason: "no answer")
                ))
        }
        return verdicts
    }

    /// The project's credential that serves the environment, read from the store at most once a second.
    private func credential(for key: PoolKey, now: Timestamp) async -> APNsCredential? {
        let apnsEnvironment: APNsCredential.Environment = key.isSandbox ? .development : .production
        var known = credentials.withLock { cache in
            cache[key.projectID].flatMap { now.milliseconds - $0.readAt.milliseconds < 1000 ? $0.credentials : nil }
        }
        if known == nil {
            let read = (try? await environment.store.apnsCredentials(projectID: key.projectID)) ?? []
            credentials.withLock { $0[key.projectID] = (now, read) }
            known = read
        }
        return known?.first { $0.environment.serves(apnsEnvironment) }
    }

    /// The connection for a project's environment, made again when its credential changed.
    private func connection(for key: PoolKey, credential: APNsCredential) async throws -> APNsConnection {
        if let current = connections.withLock({ $0[key] }), current.credential == credential { return current }
        let made = try await APNsConnection(
            credential: credential,
            baseURL: key.isSandbox ? environment.configuration.developmentURL : environment.configuration.productionURL,
            trustRoots: environment.configuration.trustRoots)
        let replaced = connections.withLock { connections in
            let old = connections[key]
            connections[key] = made
            return old
        }
        if let replaced { await replaced.shutdown() }
        return made
    }
}
