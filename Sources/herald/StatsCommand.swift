import ArgumentParser
import HeraldCore
import HeraldServer

struct StatsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stats",
        abstract: "Delivery reports: per day, app and analytics label, what was accepted, delivered and dropped.")

    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The project id.") var projectID: String
    @Option(help: "Only this app id.") var app: String?
    @Option(help: "How many days back, today included.") var days = 7

    func run() async throws {
        let store = try await openStore(storeOptions)
        guard try await store.project(id: projectID) != nil else { throw ValidationError("No project \(projectID).") }
        let now = SystemClock().now()
        let rows = try await store.deliveryReport(
            projectID: projectID, appID: app, from: CalendarDay(now.adding(seconds: -Int64(days - 1) * 86400)),
            through: CalendarDay(now))
        let counters: [(String, (DeliveryReportRow) -> Int)] = [
            ("accepted", { $0[.accepted] }), ("delivered", { $0[.delivered] }), ("pending", { $0.pending }),
            ("collapsed", { $0[.collapsed] }), ("expired", { $0[.expired] }),
            ("too_many_pending", { $0[.droppedTooManyPending] }), ("inactive", { $0[.droppedDeviceInactive] }),
            ("refused", { $0[.droppedRefused] }),
            ("unregistered", { $0[.unregistered] }), ("throttled", { $0[.throttled] }), ("opened", { $0[.opened] }),
            ("impressions", { $0[.impressions] }),
        ]
        print((["day", "app", "label"] + counters.map(\.0)).joined(separator: "\t"))
        for row in rows {
            let fields = [
                row.key.day, row.key.appID.isEmpty ? "-" : row.key.appID, row.key.label.isEmpty ? "-" : row.key.label,
            ]
            print((fields + counters.map { String($0.1(row)) }).joined(separator: "\t"))
        }
    }
}
