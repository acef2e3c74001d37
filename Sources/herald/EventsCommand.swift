import ArgumentParser
import Foundation
import HeraldCore
import HeraldStorage

struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "A project's message events (docs/EVENTS.md).",
        subcommands: [Export.self])

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write a project's events as JSON Lines, oldest first, for BigQuery or ClickHouse.")

        @OptionGroup var storeOptions: StoreOptions
        @Option(help: "The project id.") var project: String
        @Option(help: "The first moment, RFC 3339 (2026-11-01T00:00:00Z) or milliseconds since 1970.")
        var since: String
        @Option(help: "The moment after the last, in the same forms; default now.") var until: String?
        @Option(help: "The file to write; default standard output.") var output: String?

        func run() async throws {
            let store = try await openStore(storeOptions)
            guard try await store.project(id: project) != nil else { throw ValidationError("No project \(project).") }
            let filter = EventFilter(
                since: try Self.moment(since, "--since"), until: try until.map { try Self.moment($0, "--until") })
            let handle: FileHandle
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: nil) else {
                    throw ValidationError("Cannot write \(output).")
                }
                handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
            } else {
                handle = FileHandle.standardOutput
            }
            let eventIDs = try await EventIDs.load(from: store).project(project)
            var after: Int64 = 0
            var written = 0
            while true {
                let page = try await store.events(projectID: project, after: after, limit: 5000, filter: filter)
                guard let last = page.last else { break }
                handle.write(Data(page.map { eventIDs.json($0).rendered + "\n" }.joined().utf8))
                written += page.count
                after = last.sequence
            }
            if output != nil {
                try handle.close()
                tell("\(written) events written to \(output ?? "")")
            }
        }

        /// A moment given as RFC 3339 or as milliseconds since 1970.
        static func moment(_ text: String, _ option: String) throws -> Timestamp {
            if let milliseconds = Int64(text) { return Timestamp(milliseconds: milliseconds) }
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            let plain = ISO8601DateFormatter()
            guard let date = formatter.date(from: text) ?? plain.date(from: text) else {
                throw ValidationError("\(option) takes RFC 3339 (2026-11-01T00:00:00Z) or milliseconds, got \(text).")
            }
            return Timestamp(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded()))
        }
    }
}
