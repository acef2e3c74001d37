import HTTPTypes
import HeraldCore
import HeraldDelivery
import HeraldProtocol
import Hummingbird
import Logging

/// The push endpoints of Web Push (RFC 8030) for the push channels Herald issued: `POST
/// /wp/{token}` (the endpoint handed out) and `POST /fcm/send/{token}` (the one browsers
/// report), `DELETE` on a message resource to withdraw it, UnifiedPush's discovery answer
/// on `GET /wp/{token}`, and a Matrix push gateway (`/_matrix/push/v1/notify`) that forwards
/// each notification to the push channels its pushkeys name. Answers are plain text, as
/// push services give them.
struct WebPushRoutes {
    /// The push service; without it push channels' endpoints answer 404.
    let relay: WebPushRelay?
    let logger: Logger
    /// Waiting reads of receipt subscriptions, per source address.
    let waits = WaitsPerAddress(limit: Self.maximumWaitsPerAddress)
    /// The most receipt reads one address may have waiting at once; more are answered at once.
    static let maximumWaitsPerAddress = 8

    func register(on router: Router<HeraldRequestContext>) {
        router.post("/wp/:token") { request, context in
            await push(request, token: context.parameters.get("token") ?? "")
        }
        router.post("/fcm/send/:token") { request, context in
            await push(request, token: context.parameters.get("token") ?? "")
        }
        router.get("/wp/:token") { _, context in
            await discover(token: context.parameters.get("token") ?? "")
        }
        router.post("/_matrix/push/v1/notify") { request, _ in await notify(request) }
        router.get("/_matrix/push/v1/notify") { _, _ in
            Response.json(.object([("unifiedpush", .object([("gateway", .string("matrix"))]))]))
        }
        router.get("/wp/r/:subscription") { request, context in
            await receipts(
                request, subscription: context.parameters.get("subscription") ?? "", from: context.sourceAddress)
        }
        router.delete("/wp/m/:token/:message") { _, context in
            await withdraw(
                token: context.parameters.get("token") ?? "", messageID: context.parameters.get("message") ?? "")
        }
    }

    private func push(_ request: Request, token: String) async -> Response {
        await answering {
            guard let relay = relay else { throw Self.unknownChannel }
            guard let body = try? await request.body.collect(upTo: WebPushRequest.maximumBodyBytes + 1) else {
                throw WebPushRequest.Refusal(status: 413, reason: "The body is larger than 4096 bytes.")
            }
            let headers = request.headers
            let parsed = try WebPushRequest.parse(
                header: { name in HTTPField.Name(name).flatMap { headers[$0] } },
                body: Array(body.readableBytesView))
            let credential: VAPID.Credential?
            do {
                credential = try VAPID.credential(
                    authorization: headers[.authorization],
                    cryptoKey: HTTPField.Name("crypto-key").flatMap { headers[$0] })
            } catch let failure as VAPID.Failure {
                throw WebPushRequest.Refusal(status: 401, reason: failure.description)
            }
            let accepted = try await relay.push(parsed, token: token, credential: credential)
            var fields: HTTPFields = [.location: accepted.location]
            fields[HTTPField.Name("TTL")!] = String(accepted.ttlSeconds)
            if let receipts = accepted.receipts {
                fields[HTTPField.Name("Link")!] =
                    "<\(relay.receiptSubscription(receipts))>; rel=\"urn:ietf:params:push:receipt\""
            }
            // Prefer: respond-async (RFC 7240) is answered as accepted, the receipt to follow.
            return Response(status: parsed.wantsReceipt ? .accepted : .created, headers: fields)
        }
    }

    /// A receipt subscription's receipts (RFC 8030 §5.1), as JSON: each with its `sequence`,
    /// the `message` resource it is for and when the device `acknowledged` it (milliseconds
    /// since the epoch). `?after=<sequence>` says what the sender has read, which is then
    /// forgotten; `Prefer: wait=<seconds>` (at most 30) waits for a receipt when none is there,
    /// for at most `maximumWaitsPerAddress` requests of one address at once.
    private func receipts(_ request: Request, subscription: String, from address: String) async -> Response {
        await answering {
            guard let relay = relay else { throw Self.unknownChannel }
            let query = request.uri.queryParameters
            guard let after = query.get("after").map({ Int64($0) }) ?? 0, after >= 0 else {
                throw WebPushRequest.Refusal(status: 400, reason: "after must be a receipt's sequence.")
            }
            let wait = request.headers[HTTPField.Name("prefer")!].flatMap(Self.waitSeconds) ?? 0
            let receipts = try await waits.withWait(.seconds(min(wait, 30)), from: address) { wait in
                try await relay.receipts(subscription: subscription, acknowledgedThrough: after, wait: wait)
            }
            return Response.json(
                .object([
                    (
                        "receipts",
                        .array(
                            receipts.map { receipt in
                                .object([
                                    ("sequence", .number(Double(receipt.sequence))),
                                    (
                                        "message",
                                        .string(
                                            relay.messageResource(token: receipt.token, messageID: receipt.messageID))
                                    ),
                                    ("acknowledged", .number(Double(receipt.acknowledgedAt.milliseconds))),
                                ])
                            })
                    )
                ]))
        }
    }

    /// The seconds of a `Prefer: wait=N` preference (RFC 7240).
    private static func waitSeconds(_ prefer: String) -> Int? {
        for preference in prefer.split(separator: ",") {
            let parts = preference.filter { $0 != " " && $0 != "\t" }.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "wait", let seconds = Int(parts[1]) { return max(seconds, 0) }
        }
        return nil
    }

    /// UnifiedPush's discovery: a distributor's server answers `{"unifiedpush":{"version":1}}`.
    private func discover(token: String) async -> Response {
        await answering {
            guard let relay = relay else { throw Self.unknownChannel }
            _ = try await relay.channel(token)
            return Response.json(.object([("unifiedpush", .object([("version", .number(1))]))]))
        }
    }

    private func withdraw(token: String, messageID: String) async -> Response {
        await answering {
            guard let relay = relay else { throw Self.unknownChannel }
            guard try await relay.withdraw(token: token, messageID: messageID) else {
                throw WebPushRequest.Refusal(status: 404, reason: "No such undelivered message.")
            }
            return Response(status: .noContent)
        }
    }

    /// A Matrix homeserver's notification (Push Gateway API): the whole notification goes,
    /// as the push message's body, to each device whose pushkey is one of Herald's
    /// endpoints; pushkeys of unknown or unsubscribed channels come back as `rejected`, so
    /// that the homeserver drops them. Other pushkeys are not Herald's to judge.
    private func notify(_ request: Request) async -> Response {
        await answering {
            guard let relay = relay,
                let body = try? await request.body.collect(upTo: Self.maximumMatrixBodyBytes + 1),
                body.readableBytes <= Self.maximumMatrixBodyBytes,
                let json = try? JSONParser.parse(Array(body.readableBytesView)),
                let notification = json["notification"], let members = notification.objectMembers
            else { throw WebPushRequest.Refusal(status: 400, reason: "The body is not a Matrix notification.") }
            let urgency: WebPushRequest.Urgency = notification["prio"]?.stringValue == "low" ? .normal : .high
            var rejected: [JSONValue] = []
            var seen: Set<String> = []
            for device in notification["devices"]?.arrayElements ?? [] {
                // The Matrix push gateway API: an app_id of at most 64 characters names the
                // app; each pushkey is pushed to once, and at most `maximumMatrixDevices` are.
                guard let appID = device["app_id"]?.stringValue, Self.isMatrixAppID(appID),
                    let pushkey = device["pushkey"]?.stringValue, seen.count < Self.maximumMatrixDevices,
                    seen.insert(pushkey).inserted, let token = relay.token(ofEndpoint: pushkey)
                else { continue }
                // Each device is sent the notification naming itself alone among the devices.
                let own = JSONValue.object(members.map { $0.key == "devices" ? ($0.key, .array([device])) : $0 })
                let payload = Array(JSONValue.object([("notification", own)]).rendered.utf8)
                guard payload.count <= WebPushRequest.maximumBodyBytes else {
                    throw WebPushRequest.Refusal(status: 413, reason: "The notification is larger than 4096 bytes.")
                }
                do {
                    _ = try await relay.push(
                        WebPushRequest(ttlSeconds: 86_400, urgency: urgency, body: payload), token: token,
                        credential: nil)
                } catch let refusal as WebPushRequest.Refusal where refusal.status == 404 || refusal.status == 410 {
                    rejected.append(.string(pushkey))
                } catch let refusal as WebPushRequest.Refusal {
                    logger.debug("matrix notification not sent", metadata: ["reason": "\(refusal.reason)"])
                }
            }
            return Response.json(.object([("rejected", .array(rejected))]))
        }
    }

    /// The largest Matrix notification taken: the homeserver lists every device of the user.
    static let maximumMatrixBodyBytes = 16_384

    /// The most distinct pushkeys one Matrix notification is pushed to.
    static let maximumMatrixDevices = 20

    /// Whether `text` is a Matrix pusher's app id: 1 to 64 of letters, digits, `.`, `_` and `-`.
    static func isMatrixAppID(_ text: String) -> Bool {
        (1...64).contains(text.utf8.count)
            && text.utf8.allSatisfy {
                Base64URL.isAlphabet($0) || $0 == UInt8(ascii: ".")
            }
    }

    private static let unknownChannel = WebPushRequest.Refusal(
        status: 404, reason: "No push channel has this endpoint.")

    /// Runs a handler, turning refusals and failures into plain-text answers.
    private func answering(_ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let refusal as WebPushRequest.Refusal {
            return LegacySendRoutes.text(
                refusal.reason, status: HTTPResponse.Status(code: refusal.status), retryAfter: refusal.retryAfterSeconds
            )
        } catch {
            logger.error("web push failed", metadata: ["error": "\(error)"])
            return LegacySendRoutes.text(
                "The push service failed; try again.", status: .serviceUnavailable, retryAfter: 1)
        }
    }
}
