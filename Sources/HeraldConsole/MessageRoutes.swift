import Foundation
import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// A message's page at `/console/projects/{project}/messages?id={message id}`: when it was
/// accepted and what it was sent to; for a topic, condition or device group its fanout's
/// progress, for one app instance whether it still waits in its device's queue; and the
/// devices' receipts of it. A message of another project is not found.
struct MessageRoutes {
    let directory: CredentialDirectory
    let store: any QueueStore & FanoutStore & StatsStore & RegistrationStore
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
            guard let message = try await store.message(id: id), message.projectID == opened.project.id
            else {
                values["alert"] =
                    "\(opened.project.id) has no message \(id) kept: it never was, or its time to live has passed."
                return ConsoleResponse.page("message", values, status: .notFound)
            }
            values["message"] = try await facts(message)
            return ConsoleResponse.page("message", values)
        }
    }

    private func facts(_ message: StoredMessage) async throws -> [[String: String]] {
        let store = store
        var facts = [
            ("Accepted", UTCTime.shown(message.createdAt)),
            (
                "Sent to",
                "\(message.targetKind.rawValue) \(message.targetKind == .token ? Registration.redacted(message.target) : message.target)"
            ),
            ("Kept until", UTCTime.shown(message.expiresAt)),
            ("Analytics label", message.analyticsLabel.isEmpty ? "none" : message.analyticsLabel),
        ]
        if let fanout = try await store.fanoutProgress(messageID: message.id) {
            let state =
                ["queued": "waiting to start", "running": "under way", "done": "done"][fanout.state.rawValue] ?? ""
            facts.append(("Fanout", "\(state); app instances reached: \(fanout.reached)"))
        } else if let registration = try await registration(of: message) {
            let queued = try await store.pendingMessages(
                androidID: registration.androidID, after: 0, limit: 1_000, now: clock.now())
            let waiting = queued.contains { $0.messageID == message.id }
            facts.append(
                (
                    "Device",
                    waiting
                        ? "waiting in the device's queue"
                        : "not waiting: acknowledged by the device, or replaced or dropped"
                ))
        }
        let receipts = try await store.receiptCounts(messageID: message.id)
        facts.append(("Impressions", String(receipts[.impressions] ?? 0)))
        facts.append(("Opened", String(receipts[.opened] ?? 0)))
        return facts.map { ["name": $0.0, "value": $0.1] }
    }

    private func registration(of message: StoredMessage) async throws -> Registration? {
        switch message.targetKind {
        case .token: try await store.registration(token: message.target)
        case .fid:
            try await store.registration(installationID: message.target, projectID: message.projectID)
        case .topic, .condition: nil
        }
    }
}
