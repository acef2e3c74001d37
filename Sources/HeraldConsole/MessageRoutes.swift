import Foundation
import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// A message's page at `/console/projects/{project}/messages?id={message id}`: what the
/// status API answers (SEMANTICS E3) — when it was accepted and what it was sent to, its
/// state, how many app instances it was for, and how many each outcome reached. A message
/// of another project is not found.
struct MessageRoutes {
    let directory: CredentialDirectory
    let store: any EventStore
    let clock: any HeraldClock
    var access: ProjectAccess { ProjectAccess(directory: directory) }

    /// A message page's address.
    static func address(project: String, messageID: String) -> String {
        "/console/projects/\(project)/messages?id="
            + (messageID.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")
    }

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project/messages") { request, context in
            let opened = try access.opened(context)
            var values = opened.values("reports", title: "Message")
            let id = request.uri.queryParameters.get("id") ?? ""
            values["id"] = id
            guard !id.isEmpty else { return ConsoleResponse.page("message", values) }
            guard let status = try await store.messageStatus(projectID: opened.project.id, messageID: id) else {
                values["alert"] =
                    "\(opened.project.id) has no message \(id) kept: it never was, or its events are past retention."
                return ConsoleResponse.page("message", values, status: .notFound)
            }
            values["message"] = facts(status)
            return ConsoleResponse.page("message", values)
        }
    }

    private func facts(_ status: MessageStatus) -> [[String: String]] {
        let accepted = status.accepted
        var facts = [
            ("Accepted", UTCTime.shown(accepted.at)),
            ("Sent to", "\(accepted.targetKind) \(accepted.target)"),
            ("Kept until", UTCTime.shown(accepted.expiresAt)),
            ("Analytics label", accepted.analyticsLabel.isEmpty ? "none" : accepted.analyticsLabel),
            ("State", status.state(now: clock.now()).rawValue),
        ]
        if let fanout = status.fanout {
            facts.append(
                ("Fanout", "\(fanout.finished ? "done" : "under way"); app instances reached: \(fanout.reached)"))
        }
        facts.append(("Waiting", String(status.waiting)))
        for type in MessageEventType.outcomes {
            facts.append((type.rawValue.prefix(1).uppercased() + type.rawValue.dropFirst(), String(status[type])))
        }
        return facts.map { ["name": $0.0, "value": $0.1] }
    }
}
