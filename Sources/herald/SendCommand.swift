import ArgumentParser
import HeraldClient
import HeraldCore
import HeraldTools

struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send", abstract: "Send a message with the HTTP v1 API, authenticated by a key file.")

    @Option(help: "The service-account key file Herald wrote.") var credentials: String
    @Option(help: "A registration token.") var token: String?
    @Option(help: "A topic name.") var topic: String?
    @Option(help: "A topic condition, e.g. \"'a' in topics && 'b' in topics\".") var condition: String?
    @Option(help: "Notification title.") var title: String?
    @Option(help: "Notification body.") var body: String?
    @Option(name: .customLong("data"), help: "A data pair key=value (repeatable).") var data: [String] = []
    @Option(help: "Time to live in seconds.") var ttl: Int?
    @Option(help: "normal or high.") var priority: String?
    @Option(name: .customLong("collapse-key"), help: "The Android collapse key.") var collapseKey: String?
    @Flag(name: .customLong("dry-run"), help: "Validate only (validate_only); nothing is sent.") var dryRun = false
    @Option(help: "Herald's base URL (default: from the key file's token_uri).") var server: String?

    func validate() throws {
        guard [token, topic, condition].compactMap({ $0 }).count == 1 else {
            throw ValidationError("Give exactly one of --token, --topic and --condition.")
        }
    }

    func run() async throws {
        let account = try ServiceAccountCredentials(keyFile: credentials)
        let baseText = server ?? String(account.tokenURI.dropLast("/token".count))
        guard baseText.hasPrefix("http://") || baseText.hasPrefix("https://") else {
            throw ValidationError("the server URL must be http://HOST[:PORT] or https://HOST[:PORT]")
        }
        let base = baseText.hasSuffix("/") ? String(baseText.dropLast()) : baseText
        var message: [(key: String, value: JSONValue)] = []
        if let token { message.append((key: "token", value: .string(token))) }
        if let topic { message.append((key: "topic", value: .string(topic))) }
        if let condition { message.append((key: "condition", value: .string(condition))) }
        if title != nil || body != nil {
            message.append(
                (
                    key: "notification",
                    value: .stringObject(
                        [("title", title), ("body", body)].compactMap { pair in pair.1.map { (pair.0, $0) } })
                ))
        }
        if !data.isEmpty {
            var pairs: [(String, String)] = []
            for item in data {
                guard let equals = item.firstIndex(of: "=") else { throw ValidationError("--data takes key=value") }
                pairs.append((String(item[..<equals]), String(item[item.index(after: equals)...])))
            }
            message.append((key: "data", value: .stringObject(pairs)))
        }
        var android: [(key: String, value: JSONValue)] = []
        if let ttl { android.append((key: "ttl", value: .string("\(ttl)s"))) }
        if let priority { android.append((key: "priority", value: .string(priority))) }
        if let collapseKey { android.append((key: "collapse_key", value: .string(collapseKey))) }
        if !android.isEmpty { message.append((key: "android", value: .object(android))) }
        var request: [(key: String, value: JSONValue)] = [(key: "message", value: .object(message))]
        if dryRun { request.append((key: "validate_only", value: .bool(true))) }

        let accessToken = try await account.accessToken()
        let result = try await WebRequest.send(
            .POST, base + "/v1/projects/\(account.projectID)/messages:send",
            headers: [("Authorization", "Bearer \(accessToken)"), ("Content-Type", "application/json")],
            body: JSONValue.object(request).renderedBytes)
        let answer = String(decoding: result.body, as: UTF8.self)
        guard result.status == 200, let name = (try? JSONParser.parse(result.body))?["name"]?.stringValue else {
            throw ValidationError("send failed (HTTP \(result.status)): \(answer)")
        }
        print(name)
    }
}
