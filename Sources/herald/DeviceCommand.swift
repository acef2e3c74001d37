import ArgumentParser
import Foundation
import HeraldClient
import HeraldCore
import Logging
import UnixSignals

struct DeviceCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "device",
        abstract: "A command-line device: registers, prints its token, then one JSON line per message received.",
        discussion: """
            Output lines: `token: T` (with --web-push, `endpoint: URL` and `keys: {"p256dh":…,"auth":…}`), then
            one JSON object per message handed to the app (`{"id":…,"push":…}` for a decrypted Web Push message), `tray: {...}` for a
            notification shown while the app is in the background, and `deleted: N` when the server dropped
            stored messages; `sent: ID` when the server has an upstream message, `send-error: ID REASON` when
            one was not sent. Commands on standard input, one a line: doze, wake, background, foreground,
            open MESSAGE-ID (tap a tray notification), upstream ID [ttl:SECONDS] KEY=VALUE... (send a message to
            the app server), unsubscribe (end the Web Push subscription), uninstall, quit. Each failed or ended connection to the
            gateway is told on standard error, with its reason, as it is tried again.
            """)

    @Option(help: "Herald's HTTP base URL, http:// or https:// (then checked against --ca when given).") var server =
        "http://127.0.0.1:8080"
    @Option(help: "The project id.") var project: String
    @Option(name: .customLong("api-key"), help: "The project's API key (herald project show).") var apiKey: String
    @Option(name: .customLong("app-id"), help: "The app id (package name or Firebase app id).") var appID: String
    @Option(help: "The device gateway, HOST:PORT (default: the server's host, port 5228).") var gateway: String?
    @Option(help: "android, apple or web.") var platform = "android"
    @Option(help: "Where to keep this device's identity between runs.") var identity: String?
    @Option(help: "The gateway CA certificate to trust (the server prints its path).") var ca: String?
    @Flag(help: "Connect to the gateway without TLS.") var plaintext = false
    @Flag(help: "Start dozing: only high-priority messages arrive until `wake`.") var doze = false
    @Flag(help: "Start with the app in the background: notifications go to the tray.") var background = false
    @Flag(help: "Delete this device's token (uninstall the app) and exit.") var uninstall = false
    @Flag(
        name: .customLong("web-push"),
        help: "Subscribe to Web Push too: prints `endpoint:` and `keys:`, then decrypted push messages.")
    var webPush = false
    @Option(
        name: .customLong("application-server-key"),
        help: "The VAPID public key (base64url) the Web Push subscription is made for.")
    var applicationServerKey: String?

    @Option(
        name: .customLong("apns-token"),
        help: "With --platform apple: register to be reached through APNs with this device token (hex), then exit.")
    var apnsToken: String?
    @Flag(name: .customLong("apns-sandbox"), help: "The APNs token is for the development environment.")
    var apnsSandbox = false
    @Option(
        name: .customLong("open-sealed"),
        help: "Open a sealed APNs payload (a JSON file, - for standard input) with the identity's keys, print it, exit."
    )
    var openSealed: String?

    func run() async throws {
        if let openSealed {
            // What the app's Notification Service Extension does with a sealed notification.
            guard let path = identity, let saved = try DeviceIdentity.load(from: path) else {
                throw ValidationError("--open-sealed needs the --identity the app instance registered with")
            }
            let payload =
                openSealed == "-"
                ? Array(FileHandle.standardInput.readDataToEndOfFile())
                : Array(try Data(contentsOf: URL(fileURLWithPath: openSealed)))
            emit(String(decoding: try SealedNotification.open(payload, identity: saved), as: UTF8.self))
            return
        }
        guard let platform = Platform(rawValue: platform) else {
            throw ValidationError("--platform must be android, apple or web")
        }
        guard WebRequest.isWebURL(server), let serverHost = URL(string: server)?.host else {
            throw ValidationError("--server must be http://HOST:PORT or https://HOST[:PORT]")
        }
        var gatewayHost = serverHost
        var gatewayPort = 5228
        if let gateway {
            let parts = gateway.split(separator: ":")
            guard parts.count == 2, let port = Int(parts[1]) else { throw ValidationError("--gateway is HOST:PORT") }
            gatewayHost = String(parts[0])
            gatewayPort = port
        }
        let trust: HeraldClient.Configuration.Trust =
            plaintext ? .plaintext : ca.map { .certificateAuthority(path: $0) } ?? .system
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .warning
            return handler
        }
        var configuration = HeraldClient.Configuration(
            server: server, projectID: project, apiKey: apiKey, appID: appID, platform: platform,
            gatewayHost: gatewayHost, gatewayPort: gatewayPort, trust: trust, identityPath: identity)
        configuration.apnsToken = apnsToken
        configuration.apnsSandbox = apnsSandbox
        let client = HeraldClient(configuration: configuration, presenter: PrintingTray())
        let token = try await client.register()
        emit("token: \(token)")
        // Reached through APNs: no connection of its own to keep.
        if apnsToken != nil { return }
        if webPush {
            let subscription = try await client.subscribeWebPush(applicationServerKey: applicationServerKey)
            emit("endpoint: \(subscription.endpoint)")
            emit(
                "keys: "
                    + JSONValue.object([
                        (key: "p256dh", value: .string(subscription.p256dh)),
                        (key: "auth", value: .string(subscription.auth)),
                    ]).rendered)
        }
        if uninstall {
            try await client.deleteToken()
            emit("uninstalled")
            return
        }
        if doze { await client.setDozing(true) }
        if background { await client.setAppState(.background) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await client.run() }
            group.addTask {
                for await event in client.events {
                    // Not a message: on standard error, so that the output's lines stay the app's.
                    if case .disconnected(let failure) = event {
                        tell("herald device: \(failure)")
                        continue
                    }
                    emit(Self.line(for: event))
                }
            }
            group.addTask {
                for await line in standardInputLines() {
                    let words = line.split(separator: " ").map(String.init)
                    switch words.first {
                    case "doze": await client.setDozing(true)
                    case "wake": await client.setDozing(false)
                    case "background": await client.setAppState(.background)
                    case "foreground": await client.setAppState(.foreground)
                    case "upstream" where words.count >= 2:
                        var data: [String: String] = [:]
                        var ttl: Int64?
                        for word in words.dropFirst(2) {
                            if word.hasPrefix("ttl:"), let seconds = Int64(word.dropFirst(4)) {
                                ttl = seconds
                            } else if let equals = word.firstIndex(of: "=") {
                                data[String(word[..<equals])] = String(word[word.index(after: equals)...])
                            } else {
                                emit("error: not KEY=VALUE: \(word)")
                            }
                        }
                        do {
                            try await client.sendUpstream(messageID: words[1], data: data, ttlSeconds: ttl)
                        } catch {
                            emit("error: \(error)")
                        }
                    case "open" where words.count == 2:
                        if !(await client.open(messageID: words[1])) { emit("error: no tray notification \(words[1])") }
                    case "unsubscribe":
                        try await client.unsubscribeWebPush()
                        emit("unsubscribed")
                    case "uninstall":
                        try await client.deleteToken()
                        emit("uninstalled")
                        return
                    case "quit": return
                    default: emit("error: unknown command \(line)")
                    }
                }
                // Standard input closed: keep running until a signal.
                try await Task.sleep(for: .seconds(365 * 86400))
            }
            group.addTask {
                for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) { return }
            }
            _ = try await group.next()
            group.cancelAll()
        }
    }

    static func line(for event: ClientEvent) -> String {
        switch event {
        case .deletedMessages(let count):
            return "deleted: \(count)"
        case .pushMessage(let id, let payload):
            return JSONValue.object([
                (key: "id", value: .string(id)),
                (key: "push", value: .string(String(decoding: payload, as: UTF8.self))),
            ]).rendered
        case .sent(let messageID):
            return "sent: \(messageID)"
        case .sendError(let messageID, let reason):
            return "send-error: \(messageID) \(reason)"
        case .disconnected(let failure):
            return "disconnected: \(failure)"
        case .message(let message):
            var members: [(key: String, value: JSONValue)] = [
                (key: "id", value: .string(message.messageID)), (key: "from", value: .string(message.from)),
            ]
            if let collapseKey = message.collapseKey {
                members.append((key: "collapse_key", value: .string(collapseKey)))
            }
            members.append((key: "data", value: .sortedStringObject(message.data)))
            if let notification = message.notification {
                members.append((key: "notification", value: .sortedStringObject(notification)))
            }
            if let sent = message.sentTime { members.append((key: "sent", value: .number(Double(sent.milliseconds)))) }
            if let priority = message.priority { members.append((key: "priority", value: .string(priority))) }
            return JSONValue.object(members).rendered
        }
    }
}

/// Writes a line to standard output at once, unbuffered, so that a pipe sees each event as it happens.
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Writes a line to standard error: what the user should know that is not the command's output.
func tell(_ line: String) {
    FileHandle.standardError.write(Data((line + "\n").utf8))
}

/// Prints every notification shown in the tray as a `tray:` line.
struct PrintingTray: NotificationPresenter {
    func present(_ notification: PresentedNotification) async {
        var members: [(key: String, value: JSONValue)] = [(key: "id", value: .string(notification.messageID))]
        for (key, value) in notification.fields.sorted(by: { $0.key < $1.key }) {
            members.append((key: key, value: .string(value)))
        }
        emit("tray: " + JSONValue.object(members).rendered)
    }
}

/// Lines read from standard input on a thread of their own.
func standardInputLines() -> AsyncStream<String> {
    let (lines, continuation) = AsyncStream.makeStream(of: String.self)
    Thread.detachNewThread {
        while let line = readLine() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if !trimmed.isEmpty { continuation.yield(trimmed) }
        }
        continuation.finish()
    }
    return lines
}
