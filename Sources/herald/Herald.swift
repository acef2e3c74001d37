import ArgumentParser
import Foundation
import HeraldCore

@main
struct Herald: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "herald",
        abstract: "A self-hosted cloud messaging service that speaks FCM's protocols.",
        version: SemanticVersion.herald.description,
        subcommands: [
            Serve.self, ProjectCommand.self, DeviceCommand.self, SendCommand.self, StatsCommand.self, TokenCommand.self,
            BenchCommand.self, DropInCommand.self, ConsoleCommand.self, EventsCommand.self,
            BackupCommand.self, RestoreCommand.self,
        ])

    /// Runs the command with a umask that keeps every file Herald makes (the store, its
    /// log, keys, key files) readable by its owner alone, whatever the caller's umask.
    static func main() async {
        umask(0o077)
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? any AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

/// Options every command that opens the store takes.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "The data directory (embedded SQLite store).")
    var dataDirectory = "./herald-data"

    @Option(
        name: .customLong("store"),
        help: "A postgres://user:password@host:port/database URL: the store several nodes share (env HERALD_STORE).")
    var storeURL: String? = ProcessInfo.processInfo.environment["HERALD_STORE"]
}
