import HeraldCore
import HeraldStorage
import Logging
import Synchronization

/// What every push service's part of the hand-off does alike (SEMANTICS A3, R4, W3), written
/// once: whether a key's entries may go now (`HandOffPacing`), holding them while the service
/// refuses the credential, and sorting the service's verdicts into what becomes of each entry
/// and when the key's entries go again. A key is what the service paces by: a project's APNs
/// environment, a project at FCM, a project at one browser push service.
final class HandOffLane<Key: Hashable & Sendable, Credential: Hashable & Sendable>: Sendable {
    /// How the service is named in metrics (`herald_<metric>_hand_offs_total`) and in the log.
    struct Naming: Sendable {
        /// `apns`, `fcm`, `web_push`.
        var metric: String
        /// The log line when the service starts refusing a credential.
        var refusalLine: String
        /// The log line when the service says an app instance is gone.
        var goneLine: String
        /// The message of the error counted for the project when a refusal starts.
        var refusalError: @Sendable (_ key: Key, _ reason: String) -> String
        /// What the log says of a key.
        var metadata: @Sendable (_ key: Key) -> Logger.Metadata
    }

    private let naming: Naming
    private let environment: HandOffEnvironment
    private let pacing = Mutex<[Key: HandOffPacing<Credential>]>([:])
    /// `herald_<metric>_hand_offs_total` and `herald_<metric>_credential_refusals_total`.
    private let handOffsMetric: String
    private let refusalsMetric: String

    init(naming: Naming, environment: HandOffEnvironment) {
        self.naming = naming
        self.environment = environment
        handOffsMetric = "herald_\(naming.metric)_hand_offs_total"
        refusalsMetric = "herald_\(naming.metric)_credential_refusals_total"
    }

    /// The key's credential as `read` answers it, and the deferral of the entries when they
    /// must wait now: when the store could not read the credential (`credentialUnread`), or
    /// while the key's pacing holds them (`held`).
    func credential(
        for handOffs: [HandOff], key: Key, projectID: String, now: Timestamp,
        read: () async throws -> Credential?
    ) async -> (credential: Credential?, held: HandOffOutcome?) {
        let credential: Credential?
        do {
            credential = try await read()
        } catch {
            var outcome = HandOffOutcome()
            credentialUnread(handOffs, key: key, projectID: projectID, error: error, now: now, into: &outcome)
            return (nil, outcome)
        }
        return (credential, held(handOffs, key: key, credential: credential, now: now))
    }

    /// The deferral of entries that must wait now, or nil when they may go.
    private func held(_ handOffs: [HandOff], key: Key, credential: Credential?, now: Timestamp) -> HandOffOutcome? {
        let admission = pacing.withLock {
            $0[key, default: HandOffPacing()].admission(credential: credential, now: now)
        }
        guard case .wait(let until, _) = admission else { return nil }
        var outcome = HandOffOutcome()
        outcome.deferred[until] = handOffs.map(\.entry.sequence)
        return outcome
    }

    /// Holds a key's entries back while the service refuses its credential (or it has none):
    /// one log line and one counted error when the refusal starts, a metric for each entry held.
    func refuse(
        _ handOffs: [HandOff], key: Key, projectID: String, credential: Credential?, reason: String, now: Timestamp,
        into outcome: inout HandOffOutcome
    ) {
        let isNew = pacing.withLock {
            $0[key, default: HandOffPacing()].credentialRefused(credential, reason: reason, now: now)
        }
        if isNew {
            var metadata = naming.metadata(key)
            metadata["project"] = "\(projectID)"
            metadata["reason"] = "\(reason)"
            environment.logger.error("\(naming.refusalLine)", metadata: metadata)
            environment.errors.count(
                HeraldError(
                    status: .unauthenticated, fcmCode: .thirdPartyAuthError, message: naming.refusalError(key, reason)),
                projectID: projectID, at: now)
        }
        environment.metrics.increment(refusalsMetric, by: handOffs.count)
        outcome.deferred[now.adding(seconds: HandOffPacing<Credential>.pausedRecheckSeconds), default: []] +=
            handOffs.map(\.entry.sequence)
    }

    /// Defers entries whose credential the store could not read: they wait with a backoff,
    /// and the project is charged no refusal, since the service refused nothing.
    private func credentialUnread(
        _ handOffs: [HandOff], key: Key, projectID: String, error: any Error, now: Timestamp,
        into outcome: inout HandOffOutcome
    ) {
        var metadata = naming.metadata(key)
        metadata["project"] = "\(projectID)"
        metadata["error"] = "\(error)"
        environment.logger.warning("\(naming.metric) credential unreadable; messages wait", metadata: metadata)
        unreachable(handOffs, key: key, now: now, into: &outcome)
    }

    /// Defers entries that could not be sent at all (no connection, no token): a backoff.
    func unreachable(_ handOffs: [HandOff], key: Key, now: Timestamp, into outcome: inout HandOffOutcome) {
        let at = pacing.withLock { $0[key, default: HandOffPacing()].failed(now: now, jitter: .random(in: 0..<1)) }
        environment.metrics.increment(handOffsMetric, [("outcome", "retry")], by: handOffs.count)
        outcome.deferred[at, default: []] += handOffs.map(\.entry.sequence)
    }

    /// Sorts the service's verdicts on a batch: delivered entries are acknowledged, gone app
    /// instances unregistered, refused messages dropped; a refused credential holds what is
    /// left; retries back off (the whole key, no sooner than the service asked); entries whose
    /// token must be made again go a second later. Answers whether any asked for a new token.
    @discardableResult
    func settle(
        _ verdicts: [(HandOff, HandOffVerdict)], key: Key, projectID: String, credential: Credential,
        now: Timestamp, into outcome: inout HandOffOutcome
    ) -> Bool {
        var retried: [HandOff] = []
        var renewed: [Int64] = []
        var wait: (retryAfter: Int64?, atLeast: Int64) = (nil, 0)
        var refusedReason: String?
        for (handOff, verdict) in verdicts {
            switch verdict {
            case .delivered:
                outcome.delivered[handOff.entry.androidID, default: []].append(handOff.entry.persistentID)
            case .unregistered(let reason):
                outcome.unregistered.append(handOff.entry.token)
                var metadata = naming.metadata(key)
                metadata["project"] = "\(projectID)"
                metadata["token"] = "\(Registration.redacted(handOff.entry.token))"
                metadata["reason"] = "\(reason)"
                environment.logger.info("\(naming.goneLine)", metadata: metadata)
            case .refused(let reason):
                outcome.dropped.append(handOff.entry)
                var metadata = naming.metadata(key)
                metadata["project"] = "\(projectID)"
                metadata["message"] = "\(handOff.entry.messageID)"
                metadata["reason"] = "\(reason)"
                environment.logger.warning("\(naming.metric) refused a message", metadata: metadata)
            case .retry(_, let retryAfter, let atLeast):
                retried.append(handOff)
                wait = (max(wait.retryAfter ?? 0, retryAfter ?? 0), max(wait.atLeast, atLeast))
            case .renewToken:
                renewed.append(handOff.entry.sequence)
            case .credentialRefused(let reason):
                refusedReason = reason
                retried.append(handOff)
            }
            environment.metrics.increment(handOffsMetric, [("outcome", verdict.outcome)])
        }
        if !renewed.isEmpty { outcome.deferred[now.adding(seconds: 1), default: []] += renewed }
        if let refusedReason {
            refuse(
                retried, key: key, projectID: projectID, credential: credential, reason: refusedReason, now: now,
                into: &outcome)
        } else if !retried.isEmpty {
            // The service turned the key away (all of a batch, or a quota): back off, with
            // jitter, no sooner than it asked.
            let at = pacing.withLock { pacing in
                if retried.count < verdicts.count, wait.atLeast == 0 { pacing[key, default: HandOffPacing()].reached() }
                return pacing[key, default: HandOffPacing()].failed(
                    now: now, retryAfterSeconds: wait.retryAfter, atLeastSeconds: wait.atLeast,
                    jitter: .random(in: 0..<1))
            }
            outcome.deferred[at, default: []] += retried.map(\.entry.sequence)
        } else {
            pacing.withLock { $0[key, default: HandOffPacing()].reached() }
        }
        return !renewed.isEmpty
    }
}
