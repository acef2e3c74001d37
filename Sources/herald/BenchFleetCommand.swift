import ArgumentParser
import Foundation
import HeraldTools
import Synchronization

extension BenchCommand {
    /// `herald bench fleet`: devices that stay connected through node restarts and
    /// failovers, printing what they receive (compat/chaos.py reads it).
    struct Fleet: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Keep N devices connected (reconnecting when a node goes away); print `ready`, `message DEVICE ID` and `reconnected DEVICE` lines.",
            shouldDisplay: false)

        @OptionGroup var targetOptions: TargetOptions
        @Option(help: "How many devices.") var devices = 1000
        @Option(
            help:
                "A JSON file of the devices' identities: read when it exists, else written after registering (each with its token)."
        )
        var instances: String
        @Option(help: "How long to run, in seconds (until interrupted without it).") var seconds: Double?

        func run() async throws {
            guard targetOptions.url != nil else { throw ValidationError("--url is required.") }
            let target = try targetOptions.target(server: nil)
            let identities: [BenchInstance]
            if let data = FileManager.default.contents(atPath: instances) {
                identities = try JSONDecoder().decode([BenchInstance].self, from: data)
            } else {
                identities = try await target.registerInstances(devices)
                let data = try JSONEncoder().encode(identities)
                try data.write(to: URL(fileURLWithPath: instances), options: .atomic)
            }
            let out = Mutex(FileHandle.standardOutput)
            let fleet = DeviceFleet(target: target, instances: identities)
            let task = Task {
                await fleet.run { event in
                    let line: String
                    switch event {
                    case .ready: line = "ready \(identities.count)\n"
                    case .reconnected(let device): line = "reconnected \(device)\n"
                    case .message(let device, let id): line = "message \(device) \(id)\n"
                    }
                    out.withLock { $0.write(Data(line.utf8)) }
                }
            }
            if let seconds {
                try? await Task.sleep(for: .seconds(seconds))
            } else {
                // Until SIGTERM or SIGINT: both end the process, closing every connection.
                while true { try? await Task.sleep(for: .seconds(3600)) }
            }
            task.cancel()
            await task.value
        }
    }
}
