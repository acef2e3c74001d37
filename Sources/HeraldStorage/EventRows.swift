import HeraldCore

/// The rows the facts of one transaction add (SEMANTICS E1, E2): an event for each fact
/// kept on its own, and per message and type the number of those only counted. The same
/// for every backend.
struct EventRows {
    struct Count: Hashable {
        var projectID: String
        var messageID: String
        var type: MessageEventType
    }

    var events: [MessageEvent] = []
    var counts: [Count: Int] = [:]

    /// The rows for `stats`, written by `node` at `now`.
    init(_ stats: [DeliveryStat], node: String, at now: Timestamp) {
        for stat in stats where !stat.key.projectID.isEmpty {
            guard let fact = stat.fact, var type = MessageEventType(stat.counter) else { continue }
            if type == .delivered, fact.isHandOff { type = .handedOff }
            guard fact.eachKept else {
                counts[Count(projectID: stat.key.projectID, messageID: fact.messageID, type: type), default: 0] +=
                    stat.amount
                continue
            }
            let event = MessageEvent(
                type: type, reason: MessageEventType.reason(stat.counter), projectID: stat.key.projectID,
                messageID: fact.messageID, appID: stat.key.appID,
                token: fact.token.isEmpty ? "" : Registration.redacted(fact.token), analyticsLabel: stat.key.label,
                node: node, at: now)
            events += repeatElement(event, count: max(0, stat.amount))
        }
    }

    /// The `accepted` event of a stored message; nil for a message of no project (Web Push).
    static func accepted(_ message: StoredMessage, node: String) -> MessageEvent? {
        guard !message.projectID.isEmpty else { return nil }
        return MessageEvent(
            type: .accepted, projectID: message.projectID, messageID: message.id,
            analyticsLabel: message.analyticsLabel, node: node, at: message.createdAt,
            targetKind: message.targetKind.rawValue,
            target: message.targetKind == .token ? Registration.redacted(message.target) : message.target,
            expiresAt: message.expiresAt)
    }

    /// A message's status from its `accepted` event, the number of events of each type,
    /// the counts of facts kept only as counts, and its fanout's progress.
    static func status(
        accepted: MessageEvent, events: [(String, Int)], counts: [(String, Int)],
        fanout: (state: String, reached: Int)?
    ) -> MessageStatus {
        var totals: [MessageEventType: Int] = [:]
        for (type, count) in events + counts {
            guard let type = MessageEventType(rawValue: type), type != .accepted else { continue }
            totals[type, default: 0] += count
        }
        return MessageStatus(
            accepted: accepted, counts: totals, fanout: fanout.map { ($0.reached, $0.state == "done") })
    }
}
