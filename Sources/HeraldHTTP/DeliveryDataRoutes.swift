import HeraldCore
import HeraldStorage
import Hummingbird

/// `GET /v1beta1/projects/{p}/androidApps/{app}/deliveryData`: delivery reports in the
/// FCM Data API's shape (SEMANTICS L7), one entry per day and analytics label, oldest
/// first, over the last year.
struct DeliveryDataRoutes {
    let authenticator: Authenticator
    let stats: any StatsStore
    let clock: any HeraldClock

    func register(on router: Router<HeraldRequestContext>) {
        router.get("/v1beta1/projects/:project/androidApps/:app/deliveryData") { request, context in
            let (_, project) = try await authenticator.authorize(
                authorization: request.headers[.authorization],
                projectName: try context.parameters.require("project"))
            let app = try context.parameters.require("app")
            let query = request.uri.queryParameters
            let pageSize = min(10_000, max(1, query.get("pageSize").flatMap { Int($0) } ?? 1000))
            var offset = 0
            if let token = query.get("pageToken"), !token.isEmpty {
                guard let decoded = Base64URL.decode(token).flatMap({ Int(String(decoding: $0, as: UTF8.self)) }),
                    decoded >= 0
                else { throw HeraldError.invalidField("pageToken", "The page token is not valid.") }
                offset = decoded
            }
            let now = clock.now()
            let rows = try await stats.deliveryReport(
                projectID: project.id, appID: app, from: CalendarDay(now.adding(seconds: -365 * 86400)),
                through: CalendarDay(now))
            let page = rows.dropFirst(offset).prefix(pageSize)
            var body: [(key: String, value: JSONValue)] = [
                (key: "androidDeliveryData", value: .array(page.map(Self.entry)))
            ]
            if offset + page.count < rows.count {
                body.append((key: "nextPageToken", value: .string(Base64URL.encode(String(offset + page.count).utf8))))
            }
            return Response.json(.object(body))
        }
    }

    static func entry(_ row: DeliveryReportRow) -> JSONValue {
        let accepted = row[.accepted]
        func percent(_ count: Int) -> JSONValue {
            .number(accepted == 0 ? 0 : (Double(count) * 10_000 / Double(accepted)).rounded() / 100)
        }
        let date = CalendarDay(row.key.day) ?? CalendarDay(Timestamp(seconds: 0))
        var entry: [(key: String, value: JSONValue)] = [
            (key: "appId", value: .string(row.key.appID)),
            (
                key: "date",
                value: .object([
                    (key: "year", value: .number(Double(date.year))),
                    (key: "month", value: .number(Double(date.month))),
                    (key: "day", value: .number(Double(date.day))),
                ])
            ),
        ]
        if !row.key.label.isEmpty { entry.append((key: "analyticsLabel", value: .string(row.key.label))) }
        entry.append(
            (
                key: "data",
                value: .object([
                    (key: "countMessagesAccepted", value: .string(String(accepted))),
                    (
                        key: "messageOutcomePercents",
                        value: .object([
                            (key: "delivered", value: percent(row[.delivered])),
                            (key: "pending", value: percent(row.pending)),
                            (key: "collapsed", value: percent(row[.collapsed])),
                            (key: "droppedTooManyPendingMessages", value: percent(row[.droppedTooManyPending])),
                            (key: "droppedAppForceStopped", value: percent(row[.unregistered])),
                            (key: "droppedDeviceInactive", value: percent(row[.droppedDeviceInactive])),
                        ])
                    ),
                    (
                        key: "deliveryPerformancePercents",
                        value: .object([(key: "delayedMessageThrottled", value: percent(row[.throttled]))])
                    ),
                ])
            ))
        return .object(entry)
    }
}
