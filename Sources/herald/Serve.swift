import ArgumentParser
import HeraldServer
import Logging

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run Herald: the HTTP APIs on one port.")

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .customLong("http-host"), help: "The address the HTTP API listens on.")
    var httpHost = "127.0.0.1"

    @Option(name: .customLong("http-port"), help: "The HTTP port (0 picks a free one).")
    var httpPort = 8080

    @Option(name: .customLong("public-url"), help: "The URL clients reach Herald at (default http://HOST:PORT).")
    var publicURL: String?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel = "info"

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "herald")
        var configuration = ServerConfiguration()
        configuration.dataDirectory = storeOptions.dataDirectory
        configuration.httpHost = httpHost
        configuration.httpPort = httpPort
        configuration.publicURL = publicURL
        let store = try HeraldNode.openStore(configuration)
        let node = try await HeraldNode(configuration: configuration, store: store, logger: logger)
        logger.info("data directory \(configuration.dataDirectory)")
        let host = httpHost
        try await node.run { port in
            logger.info("Herald HTTP API listening on http://\(host):\(port)")
        }
    }
}
