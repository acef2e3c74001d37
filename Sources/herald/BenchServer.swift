import Foundation
import HeraldClient
import HeraldServer
import HeraldStorage
import HeraldTools

#if canImport(Glibc)
    import Glibc
#endif

/// The `herald serve` a benchmark starts for itself when it is given no `--url`: a fresh
/// data directory with one project (`bench`), free loopback ports, the gateway in
/// plaintext or with its generated TLS certificate, and a plain-TCP XMPP listener; stopped
/// and deleted afterwards.
final class BenchServer {
    let url: String
    let gatewayPort: Int
    let keyFile: String
    let apiKey: String
    /// The plain-TCP XMPP port, and the project's sender id and server key to log in with.
    let xmppPort: Int
    let senderID: Int64
    let serverKey: String
    /// The gateway CA devices trust; nil in plaintext.
    let caPath: String?
    /// Drop-in mode's HTTPS listener (`https://127.0.0.1:PORT`) and its CA, when started with it.
    var dropInURL: String?
    var dropInCAPath: String { directory + "/data/tls/drop-in-ca.pem" }
    var pid: Int32 { process.processIdentifier }

    private let process: Process
    private let directory: String

    private init(
        url: String, gatewayPort: Int, keyFile: String, apiKey: String, xmppPort: Int, senderID: Int64,
        serverKey: String, caPath: String?, process: Process, directory: String
    ) {
        self.xmppPort = xmppPort
        self.senderID = senderID
        self.serverKey = serverKey
        self.url = url
        self.gatewayPort = gatewayPort
        self.keyFile = keyFile
        self.apiKey = apiKey
        self.caPath = caPath
        self.process = process
        self.directory = directory
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Starts a server whose project has `settings` (`name=value`, as `herald project set`).
    private static func start(
        plaintext: Bool, settings: [String], dropIn: Bool = false, mozillaPush: Bool = false,
        progress: (String) -> Void
    ) async throws -> BenchServer {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "herald-bench-" + UUID().uuidString
        ).path
        let data = directory + "/data"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try SQLiteStore(dataDirectory: data)
        let issued = try await ProjectAdministration(store: store).createProject(
            id: "bench", publicURL: "http://127.0.0.1", keyFileDirectory: directory)
        var projectSettings = issued.project.settings
        for assignment in settings { try projectSettings.apply(assignment) }
        _ = try await store.updateSettings(projectSettings, projectID: issued.project.id)
        let executable = Bundle.main.executablePath ?? CommandLine.arguments[0]
        // The server takes its metrics token from the environment it inherits, and the
        // benchmark reads its counters with the same.
        if getenv("HERALD_METRICS_TOKEN") == nil {
            setenv("HERALD_METRICS_TOKEN", "bench-\(UInt64.random(in: 0...UInt64.max))", 1)
        }
        // A port found free can be taken before the server binds it: then again on others.
        for _ in 0..<5 {
            let http = try freePort()
            let gateway = try freePort()
            let xmpp = try freePort()
            let dropInPort = try freePort()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: executable)
            process.arguments =
                [
                    "serve", "--data-dir", data, "--http-port", String(http), "--gateway-port", String(gateway),
                    "--log-level", "warning",
                    // A benchmark checks in, registers and connects thousands of devices from loopback.
                    "--checkins-per-minute", "0", "--registrations-per-minute", "0",
                    "--device-registrations-per-minute", "0", "--unauthenticated-connections-per-address", "0",
                    "--authenticated-connections-per-address", "0",
                    "--unauthenticated-connections", "0",
                    "--xmpp-plaintext-port", String(xmpp),
                ] + (plaintext ? ["--gateway-plaintext"] : [])
                + (mozillaPush ? ["--mozilla-push-project", issued.project.id] : [])
                + (dropIn
                    ? [
                        "--drop-in", "--drop-in-port", String(dropInPort), "--drop-in-hostname", "127.0.0.1",
                        "--xmpp-port", String(try freePort()),
                    ] : [])
            try process.run()
            let url = "http://127.0.0.1:\(http)"
            if await healthy(url, process: process) {
                progress("started herald serve (pid \(process.processIdentifier)) at \(url), gateway port \(gateway)")
                let server = BenchServer(
                    url: url, gatewayPort: gateway, keyFile: issued.keyFilePath, apiKey: issued.project.apiKey,
                    xmppPort: xmpp, senderID: issued.project.number, serverKey: issued.project.serverKey,
                    caPath: plaintext ? nil : data + "/tls/ca.pem", process: process, directory: directory)
                if dropIn { server.dropInURL = "https://127.0.0.1:\(dropInPort)" }
                return server
            }
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
        throw Failure(description: "herald serve did not start")
    }

    /// A server of the benchmark's own when it was given no `--url`; nil when it was.
    static func unless(
        _ url: String?, plaintext: Bool, settings: [String] = [], mozillaPush: Bool = false, json: Bool
    ) async throws -> BenchServer? {
        guard url == nil else { return nil }
        return try await start(plaintext: plaintext, settings: settings, mozillaPush: mozillaPush) { line in
            if !json { print(line) }
        }
    }

    /// A server of the benchmark's own with drop-in mode's HTTPS listener, serving every path
    /// under `127.0.0.1`.
    static func withDropIn(json: Bool) async throws -> BenchServer {
        try await start(plaintext: false, settings: [], dropIn: true) { line in if !json { print(line) } }
    }

    /// Stops the server and deletes its data.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func healthy(_ url: String, process: Process) async -> Bool {
        for _ in 0..<300 where process.isRunning {
            if let result = try? await WebRequest.send(.GET, url + "/healthz", timeout: .seconds(2)),
                result.status == 200
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// A loopback port nothing listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "bind: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
