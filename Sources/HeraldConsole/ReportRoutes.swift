import HeraldCore
import HeraldHTTP
import HeraldStorage
import Hummingbird

/// A project's delivery reports at `/console/projects/{project}/reports`: the L7 counters
/// per day as charts and a table, for every app and label or one of each, from the same
/// rows the Data API answers with (SEMANTICS L7).
struct ReportRoutes {
    let directory: CredentialDirectory
    let stats: any StatsStore
    let clock: any HeraldClock
    var access: ProjectAccess { ProjectAccess(directory: directory) }

    /// The figures shown, each the sum of its counters.
    static let figures: [(name: String, color: String, count: @Sendable (DeliveryReportRow) -> Int)] = [
        ("Accepted", "#2f6fde", { $0[.accepted] }), ("Delivered", "#0a8a3d", { $0[.delivered] }),
        ("Pending", "#b57600", { $0.pending }), ("Collapsed", "#6b4fbb", { $0[.collapsed] }),
        ("Expired", "#8a93a3", { $0[.expired] }),
        (
            "Dropped", "#c0392b",
            { $0[.droppedTooManyPending] + $0[.droppedDeviceInactive] + $0[.droppedRefused] + $0[.unregistered] }
        ),
        ("Opened", "#117a8b", { $0[.opened] }), ("Impressions", "#1d2330", { $0[.impressions] }),
    ]

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        pages.get("projects/:project/reports") { request, context in
            let opened = try access.opened(context)
            let query = request.uri.queryParameters
            let days = [7, 14, 30, 90].first { String($0) == query.get("days") } ?? 14
            let app = query.get("app").flatMap { $0.isEmpty ? nil : $0 }
            let label = query.get("label") ?? ""
            let now = clock.now()
            let all = try await stats.deliveryReport(
                projectID: opened.project.id, appID: nil,
                from: CalendarDay(now.adding(seconds: -Int64(days - 1) * 86400)),
                through: CalendarDay(now))
            let rows = all.filter { (app == nil || $0.key.appID == app) && (label.isEmpty || $0.key.label == label) }
            let dayNames = (0..<days).reversed().map {
                CalendarDay(now.adding(seconds: -Int64($0) * 86400)).description
            }
            var values = opened.values("reports", title: "Reports")
            values["charts"] = Self.figures.map { figure in
                let perDay = dayNames.map { day in rows.filter { $0.key.day == day }.reduce(0) { $0 + figure.count($1) }
                }
                return [
                    "svg": SVGBarChart(
                        title: "\(figure.name) per day", periods: dayNames, values: perDay, color: figure.color
                    ).svg
                ]
            }
            values["figures"] = Self.figures.map { ["name": $0.name] }
            values["days"] = dayNames.reversed().compactMap { day -> [String: Any]? in
                let dayRows = rows.filter { $0.key.day == day }
                guard !dayRows.isEmpty else { return nil }
                return [
                    "day": day,
                    "counts": Self.figures.map { figure in ["count": dayRows.reduce(0) { $0 + figure.count($1) }] },
                ]
            }
            values["day_options"] = [7, 14, 30, 90].map {
                ["value": String($0), "selected": $0 == days] as [String: Any]
            }
            values["app_options"] = Set(all.map(\.key.appID)).filter { !$0.isEmpty }.sorted().map {
                ["value": $0, "selected": $0 == app] as [String: Any]
            }
            values["label_options"] = Set(all.map(\.key.label)).filter { !$0.isEmpty }.sorted().map {
                ["value": $0, "selected": $0 == label] as [String: Any]
            }
            return ConsoleResponse.page("reports", values)
        }
    }
}
