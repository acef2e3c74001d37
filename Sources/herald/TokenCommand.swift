import ArgumentParser
import HeraldClient
import HeraldTools

struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print an access token for a service-account key file (for curl and scripts).")

    @Option(help: "The service-account key file Herald wrote.") var credentials: String

    func run() async throws {
        print(try await ServiceAccountCredentials(keyFile: credentials).accessToken())
    }
}
