import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// A project's scheduled sends at `/console/projects/{project}/scheduled`, latest due
/// first, each with its state and outcome; one still waiting can be cancelled.
struct ScheduleRoutes {
    let directory: CredentialDirectory
    let store: any ScheduleStore
    var access: ProjectAccess { ProjectAccess(directory: directory) }

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project/scheduled") { _, context in
            try await page(try access.opened(context), status: nil)
        }
        pages.post("projects/:project/scheduled/:id/cancel") { _, context in
            let opened = try access.opened(context)
            let id = try context.parameters.require("id")
            let cancelled = try await store.cancelScheduledSend(projectID: opened.project.id, id: id)
            if cancelled {
                context.logger.info(
                    "console send cancelled",
                    metadata: ["user": "\(opened.user.name)", "project": "\(opened.project.id)"])
            }
            return try await page(
                opened, status: cancelled ? "Cancelled." : "Not cancelled: it was sent, cancelled or never scheduled.",
                code: cancelled ? .ok : .conflict)
        }
    }

    private func page(_ opened: ProjectAccess.Opened, status: String?, code: HTTPResponse.Status = .ok) async throws
        -> Response
    {
        let sends = try await store.scheduledSends(projectID: opened.project.id, limit: 200)
        var values = opened.values("scheduled", title: "Scheduled")
        values["status"] = status as Any
        values["hasSends"] = !sends.isEmpty
        values["sends"] = sends.map { send -> [String: Any] in
            [
                "id": send.id, "due": UTCTime.shown(send.dueAt), "summary": send.summary, "by": send.createdBy,
                "state": send.state.rawValue, "outcome": send.outcome, "waiting": send.state == .waiting,
            ]
        }
        return ConsoleResponse.page("scheduled", values, status: code)
    }
}
