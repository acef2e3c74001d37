public import HeraldCore
public import HeraldStorage

/// Which claimed webhooks a node works on now (SEMANTICS E5): each on its own, at most
/// `atOnce` in all and `perProject` of one project, so that a slow or failing receiver
/// holds only its own turn and one project's webhooks cannot take every turn.
struct WebhookTurns: Sendable {
    let atOnce: Int
    let perProject: Int
    private(set) var busy: Set<String> = []
    private var byProject: [String: Int] = [:]

    init(atOnce: Int, perProject: Int) {
        self.atOnce = atOnce
        self.perProject = perProject
    }

    /// How many more webhooks may start.
    var room: Int { atOnce - busy.count }

    /// Due webhooks are looked for at `now`: a retry due by then is among them.
    mutating func looked(at now: Timestamp) {
        if let retry = nextRetry, retry <= now { nextRetry = nil }
    }

    /// The claimed webhooks that start now, in the claim's order: those not under way
    /// already, within both bounds. The others stay claimed, and are claimed again later.
    mutating func start(_ claimed: [Webhook]) -> [Webhook] {
        var starting: [Webhook] = []
        for webhook in claimed where room > 0 && !busy.contains(webhook.id) {
            guard byProject[webhook.projectID, default: 0] < perProject else { continue }
            busy.insert(webhook.id)
            byProject[webhook.projectID, default: 0] += 1
            starting.append(webhook)
        }
        return starting
    }

    /// The earliest time a webhook that failed here is to be tried again; nil for none.
    private(set) var nextRetry: Timestamp?

    /// A webhook's turn ended; `retryAt` is when it is to be tried again after a failure.
    mutating func finished(_ webhook: Webhook, retryAt: Timestamp? = nil) {
        if let retryAt { nextRetry = min(nextRetry ?? retryAt, retryAt) }
        guard busy.remove(webhook.id) != nil else { return }
        byProject[webhook.projectID] = byProject[webhook.projectID].flatMap { $0 > 1 ? $0 - 1 : nil }
    }
}
