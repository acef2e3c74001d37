import HeraldCore
import HeraldProtocol
import HeraldStorage
import HeraldTelemetry
import Logging
import Synchronization

/// The browser push services' part of the hand-off (SEMANTICS W2–W4): sends one project's
/// entries for web registrations whose endpoints are at one push service, each sealed for its
/// browser when it was queued, over one HTTP/2 connection to that service shared by every
/// project, signed with the project's application server key (one VAPID JWT a project and
/// service, made again an hour before it expires), and says what became of each by the
/// service's answer.
final class WebPushHandOffs: Sendable {
    /// A project at one push service, which the service paces and the JWT is made for.
    struct PoolKey: Hashable {
        var projectID: String
        /// The push service's origin, `https://host[:port]`: the JWT's audience.
        var origin: String
    }

    /// A JWT made for a project and push service, and when it expires.
    struct Signature {
        var key: WebPushKey
        var authorization: String
        var expiresAt: Int64
    }

    /// How long a JWT is made to last, and how long before its end one is made again.
    static let signatureSeconds: Int64 = 12 * 3600
    static let renewBeforeSeconds: Int64 = 3600

    private let environment: HandOffEnvironment
    private let lane: HandOffLane<PoolKey, WebPushKey>
    private let connections = Mutex<[String: HTTP2Connection]>([:])
    private let signatures = Mutex<[PoolKey: Signature]>([:])
    /// The JWT each service took at least once, for each project.
    private let taken = Mutex<[PoolKey: String]>([:])
    private let keys = CredentialCache<WebPushKey?>()

    init(environment: HandOffEnvironment) {
        self.environment = environment
        lane = HandOffLane(
            naming: .init(
                metric: "web_push", refusalLine: "a push service refuses the project's Web Push key; its messages wait",
                goneLine: "web push subscription gone",
                refusalError: { key, reason in "\(key.origin) refused the project's Web Push key: \(reason)." },
                metadata: { key in ["service": "\(key.origin)"] }),
            environment: environment)
    }

    func shutdown() async {
        for connection in connections.withLock({ Array($0.values) }) { await connection.shutdown() }
    }

    /// Sends one project's entries for one push service, unless its pacing holds them back.
    func forward(_ handOffs: [HandOff], key: PoolKey, now: Timestamp) async -> HandOffOutcome {
        var outcome = HandOffOutcome()
        let (webPushKey, held) = await lane.credential(for: handOffs, key: key, projectID: key.projectID, now: now) {
            try await keys.value(projectID: key.projectID, now: now) {
                try await environment.store.webPushKey(projectID: key.projectID)
            }
        }
        if let held { return held }
        let connection: HTTP2Connection
        let authorization: String
        do {
            guard let webPushKey else { throw Refusal(reason: "no Web Push key") }
            authorization = try signature(for: key, webPushKey: webPushKey, now: now)
            connection = try self.connection(origin: key.origin)
        } catch {
            let reason = (error as? Refusal)?.reason ?? "unusable Web Push key"
            lane.refuse(
                handOffs, key: key, projectID: key.projectID, credential: webPushKey, reason: reason, now: now,
                into: &outcome)
            return outcome
        }
        var verdicts: [(HandOff, HandOffVerdict)] = []
        var sendable: [(HandOff, HTTP2Connection.Request)] = []
        let headers = [
            ("content-encoding", "aes128gcm"), ("content-type", "application/octet-stream"),
            ("authorization", authorization),
        ]
        for handOff in handOffs {
            guard case .webPush(let endpoint) = handOff.destination,
                let request = try? WebPushHandOffRequest(handOff.entry, endpoint: endpoint, now: now)
            else {
                verdicts.append((handOff, .refused(reason: "not a Web Push message")))
                continue
            }
            sendable.append(
                (
                    handOff,
                    HTTP2Connection.Request(
                        path: request.path, ownHeaders: request.headers, headers: headers, body: request.body)
                ))
        }
        let answers = await connection.send(sendable.map(\.1))
        for ((handOff, _), answer) in zip(sendable, answers) {
            verdicts.append((handOff, HandOffVerdict(webPush: answer)))
        }
        // A service that took this JWT for a subscription does not refuse the key: a
        // subscription that refuses it was made with another key than its registration named,
        // and is of no use (W3). Only a JWT never taken holds the project's messages.
        if verdicts.contains(where: { $0.1 == .delivered }) { taken.withLock { $0[key] = authorization } }
        if taken.withLock({ $0[key] == authorization }) {
            for index in verdicts.indices {
                if case .credentialRefused(let reason) = verdicts[index].1 {
                    verdicts[index].1 = .unregistered(reason: reason + ", made for another key")
                }
            }
        }
        if let webPushKey {
            lane.settle(verdicts, key: key, projectID: key.projectID, credential: webPushKey, now: now, into: &outcome)
        }
        return outcome
    }

    /// Why a project's entries cannot be signed.
    struct Refusal: Error {
        var reason: String
    }

    /// The `Authorization` for the project at the push service: the JWT made before, unless
    /// the key changed or it expires within the hour.
    private func signature(for key: PoolKey, webPushKey: WebPushKey, now: Timestamp) throws -> String {
        if let known = signatures.withLock({ $0[key] }), known.key == webPushKey,
            known.expiresAt - now.seconds > Self.renewBeforeSeconds
        {
            return known.authorization
        }
        let expiresAt = now.seconds + Self.signatureSeconds
        let authorization = try VAPID.authorization(
            privateKey: webPushKey.privateKey, publicKey: webPushKey.publicKey, audience: key.origin,
            subject: environment.configuration.webPushContact, expiresAt: expiresAt)
        signatures.withLock { $0[key] = Signature(key: webPushKey, authorization: authorization, expiresAt: expiresAt) }
        environment.metrics.increment("herald_web_push_signatures_total")
        return authorization
    }

    /// The connection to a push service, shared by every project, to the address its origin
    /// has when each connection is made, checked as a webhook target's is.
    private func connection(origin: String) throws -> HTTP2Connection {
        if let known = connections.withLock({ $0[origin] }) { return known }
        let check = environment.configuration.webPushAddress
        let logger = environment.logger
        let made = try HTTP2Connection(
            baseURL: origin, tls: HTTP2Connection.clientTLS(trustRoots: environment.configuration.trustRoots),
            address: {
                // Checked again at each connection, and connected to as checked: the name is
                // not resolved a second time in between.
                do {
                    return try check(origin)
                } catch {
                    logger.warning(
                        "a push service's address is refused", metadata: ["service": "\(origin)", "why": "\(error)"])
                    throw error
                }
            })
        return connections.withLock { connections in
            if let raced = connections[origin] { return raced }
            connections[origin] = made
            return made
        }
    }
}
