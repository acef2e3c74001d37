import HeraldCore
import HeraldDelivery
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// A project's quotas, usage and errors at `/console/projects/{project}/quotas`: each limit
/// (SEMANTICS T1–T6) with its setting and what is used of it now, the 429 and 503 answers
/// per hour and the errors by code over the last hours and days; an admin changes limits
/// here as `herald project set` does.
struct QuotaRoutes {
    let directory: CredentialDirectory
    let store: any CredentialStore & StatsStore
    let quotas: Quotas
    /// The fanout engine, whose jobs count against T3.
    let fanouts: FanoutEngine?
    let clock: any HeraldClock
    var access: ProjectAccess { ProjectAccess(directory: directory) }

    /// The limits shown: rule, what it limits, and its setting's name.
    static let limits: [(rule: String, name: String, setting: String)] = [
        ("T1", "Downstream messages per minute", "downstream-per-minute"),
        ("T2", "Topic subscription changes per second", "topic-ops-per-second"),
        ("T3", "Topic and group messages being sent at once", "max-fanouts"),
        ("T4", "Collapsible messages in a burst, per device", "collapsible-burst"),
        ("T4", "Seconds for a device to earn one more", "collapsible-refill-seconds"),
        ("T5", "XMPP connections opened per minute", "xmpp-connects-per-minute"),
        ("T5", "XMPP connections at once", "xmpp-connections"),
        ("T6", "Messages per device per minute", "device-per-minute"),
        ("T6", "Messages per device per hour", "device-per-hour"),
        ("D1", "Messages waiting per device", "max-pending"),
    ]

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project/quotas") { _, context in
            try await page(try access.opened(context), status: nil)
        }
        pages.post("projects/:project/quotas") { _, context in
            let opened = try access.opened(context)
            guard opened.user.isAdmin else {
                throw ConsoleRefusal(
                    status: .forbidden, reason: "Only an admin may change a project's limits.", session: opened.session)
            }
            var settings = opened.project.settings
            do {
                for limit in Self.limits {
                    guard let value = context.form[limit.setting], !value.isEmpty else { continue }
                    try settings.apply("\(limit.setting)=\(value.trimmingCharacters(in: .whitespaces))")
                }
            } catch let error as SettingError {
                return try await page(opened, status: nil, alert: error.description, code: .badRequest)
            }
            _ = try await store.updateSettings(settings, projectID: opened.project.id)
            try await directory.reload(from: store, force: true)
            context.logger.notice(
                "console limits changed", metadata: ["user": "\(opened.user.name)", "project": "\(opened.project.id)"])
            return try await page(try access.opened(context), status: "Limits saved.")
        }
    }

    private func page(
        _ opened: ProjectAccess.Opened, status: String?, alert: String? = nil, code: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let project = opened.project
        let now = clock.now()
        let use = quotas.use(projectID: project.id, now: now)
        let fanouts = await fanouts?.jobCount(projectID: project.id)
        let inUse: [String: String] = [
            "downstream-per-minute": String(use.downstream), "topic-ops-per-second": String(use.topicOperations),
            "max-fanouts": fanouts.map { String($0.running + $0.waiting) } ?? "—",
        ]
        var values = opened.values("quotas", title: "Quotas and errors")
        values["status"] = status
        values["alert"] = alert
        values["limits"] = Self.limits.map { limit -> [String: Any] in
            let setting = ProjectSettings.names.first { $0.name == limit.setting }
            return [
                "rule": limit.rule, "name": limit.name, "setting": limit.setting,
                "value": setting.map { String(project.settings[keyPath: $0.keyPath]) } ?? "",
                "use": inUse[limit.setting] ?? "per device or connection",
            ]
        }
        let thisHour = ErrorCount.hour(of: now)
        let counts = try await store.errorCounts(
            projectID: project.id, since: thisHour.adding(seconds: -13 * 86_400 - 23 * 3600))
        values.merge(ErrorCharts(counts: counts, thisHour: thisHour).values) { _, new in new }
        return ConsoleResponse.page("quotas", values, status: code)
    }
}
