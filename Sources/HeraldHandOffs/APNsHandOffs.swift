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

        var environmentName: String { isSandbox ? "development" : "production" }
    }

    private let environment: HandOffEnvironment
    private let lane: HandOffLane<PoolKey, APNsCredential>
    private let connections = Mutex<[PoolKey: APNsConnection]>([:])
    private let credentials = CredentialCache<[APNsCredential]>()

    init(environment: HandOffEnvironment) {
        self.environment = environment
        lane = HandOffLane(
            naming: .init(
                metric: "apns", refusalLine: "apns refuses the project's credential; its messages wait",
                goneLine: "apns app instance unregistered",
                refusalError: { key, reason in "APNs refused the \(key.environmentName) credential: \(reason)." },
                metadata: { key in ["environment": "\(key.environmentName)"] }),
            environment: environment)
    }

    func shutdown() async {
        for connection in connections.withLock({ Array($0.values) }) { await connection.shutdown() }
    }

    /// Sends one project's entries for one environment, unless its pacing holds them back.
    func forward(_ handOffs: [HandOff], key: PoolKey, now: Timestamp) async -> HandOffOutcome {
        var outcome = HandOffOutcome()
        let (credential, held) = await lane.credential(for: handOffs, key: key, projectID: key.projectID, now: now) {
            try await self.credential(for: key, now: now)
        }
        if let held { return held }
        guard let credential else {
            lane.refuse(
                handOffs, key: key, projectID: key.projectID, credential: nil, reason: "no APNs credential", now: now,
                into: &outcome)
            return outcome
        }
        let connection: APNsConnection
        do {
            connection = try await self.connection(for: key, credential: credential)
        } catch {
            lane.refuse(
                handOffs, key: key, projectID: key.projectID, credential: credential, reason: "unusable credential",
                now: now, into: &outcome)
            return outcome
        }
        let verdicts = await send(handOffs, over: connection, now: now)
        lane.settle(verdicts, key: key, projectID: key.projectID, credential: credential, now: now, into: &outcome)
        return outcome
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
        if !expired.isEmpty, (try? connection.renewToken(environment.clock.now())) == true {
            let again = await connection.send(expired.map { sendable[$0].1 }, now: environment.clock.now())
            for (index, answer) in zip(expired, again) { answers[index] = answer }
        }
        for ((handOff, _), answer) in zip(sendable, answers) {
            var verdict =
                answer.map { HandOffVerdict(status: $0.status, reason: $0.reason) } ?? .retry(reason: "no answer")
            // A provider token APNs still calls expired after it was made again waits with
            // backoff, since a new one may not be made sooner (ProviderTokenSchedule).
            if verdict == .renewToken { verdict = .retry(reason: "ExpiredProviderToken") }
            verdicts.append((handOff, verdict))
        }
        return verdicts
    }

    /// The project's credential that serves the environment, read from the store at most once a second.
    private func credential(for key: PoolKey, now: Timestamp) async throws -> APNsCredential? {
        let apnsEnvironment: APNsCredential.Environment = key.isSandbox ? .development : .production
        let known = try await credentials.value(projectID: key.projectID, now: now) {
            try await environment.store.apnsCredentials(projectID: key.projectID)
        }
        return known.first { $0.environment.serves(apnsEnvironment) }
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
