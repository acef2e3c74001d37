import Foundation
import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldStorage
import Hummingbird
import Logging

/// The composer at `/console/projects/{project}` and its one form's actions, posted to
/// `…/send`: a preview of what each platform receives, a test sent to one token after a dry
/// run of the whole message, a send now, or a send scheduled for a time. Every action checks
/// the message by the API's rules and shows an error beside the field it is about.
struct ComposerRoutes {
    let directory: CredentialDirectory
    let store: any ScheduleStore
    let sender: AdmittedSender
    let clock: any HeraldClock
    var access: ProjectAccess { ProjectAccess(directory: directory) }

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project") { _, context in
            let opened = try access.opened(context)
            return ConsoleResponse.page("composer", ComposerPage().values(opened.values("")))
        }
        pages.post("projects/:project/send") { _, context in
            let opened = try access.opened(context)
            var page = ComposerPage(form: context.form)
            let action = context.form["action"] ?? "now"
            do {
                try await perform(action, opened, &page, logger: context.logger)
            } catch let error as ComposerFieldError {
                page.fail(error)
            }
            let failed = page.alert != nil || !page.errors.isEmpty
            return ConsoleResponse.page(
                "composer", page.values(opened.values("")), status: failed ? .badRequest : .ok)
        }
    }

    private func perform(_ action: String, _ opened: ProjectAccess.Opened, _ page: inout ComposerPage, logger: Logger)
        async throws
    {
        let project = opened.project
        let composition = ConsoleComposition(form: page.form)
        let request = try decode(composition.request(), project, target: "to")
        let now = clock.now()
        page.previews = DeliveryPreview.all(of: request.message, project: project, now: now)
        switch action {
        case "preview":
            page.status = "Preview below: nothing was sent."
        case "test":
            try await dryRun(composition, project, target: "to")
            let test = try decode(
                composition.request(to: composition.value("test_token")), project, target: "test_token")
            let id = try await send(test, project, target: "test_token")
            page.status = "Test sent to the token: \(name(project, id))"
        case "schedule":
            guard let due = UTCTime.parse(composition.value("send_at")), due > now else {
                throw ComposerFieldError("send_at", "Enter a time after now, in UTC.")
            }
            try await dryRun(composition, project, target: "to")
            let scheduled = ScheduledSend(
                id: SecureRandom.token(bytes: 12), projectID: project.id, messageID: MessageID.make(at: due),
                body: try composition.request().rendered, summary: composition.summary, dueAt: due,
                createdBy: opened.user.name, createdAt: now)
            try await store.addScheduledSend(scheduled)
            logger.info(
                "console send scheduled", metadata: ["user": "\(opened.user.name)", "project": "\(project.id)"])
            page.status = "Scheduled for \(UTCTime.shown(due))."
            page.statusLink = ("/console/projects/\(project.id)/scheduled", "See the scheduled sends")
        default:
            let id = try await send(request, project, target: "to")
            logger.info("console send", metadata: ["user": "\(opened.user.name)", "project": "\(project.id)"])
            page.status = "Sent: \(name(project, id))"
            page.statusLink = (MessageRoutes.address(project: project.id, messageID: id), "Follow this message")
        }
    }

    private func decode(_ body: JSONValue, _ project: Project, target: String) throws(ComposerFieldError)
        -> SendRequest
    {
        do {
            return try SendRequest.decode(body.renderedBytes, limits: project.settings.message)
        } catch {
            throw ComposerFieldError(error, target: target)
        }
    }

    /// Runs every check of a send, the target's look-up included, and sends nothing.
    private func dryRun(_ composition: ConsoleComposition, _ project: Project, target: String) async throws {
        let request = try decode(composition.request(validateOnly: true), project, target: target)
        _ = try await send(request, project, target: target)
    }

    private func send(_ request: SendRequest, _ project: Project, target: String) async throws -> String {
        do {
            return try await sender.send(request, project: project)
        } catch let error as HeraldError {
            throw ComposerFieldError(error, target: target)
        }
    }

    private func name(_ project: Project, _ id: String) -> String { "projects/\(project.id)/messages/\(id)" }
}
