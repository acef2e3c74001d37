import HeraldCore
import HeraldHTTP
import HeraldStorage
import Logging
import ServiceLifecycle

/// Adds the errors this node answered to the store's counts every few seconds, and once
/// more when the node shuts down.
struct ErrorLogService: Service {
    static let interval: Duration = .seconds(5)

    let errors: ErrorLog
    let store: any StatsStore & EventStore
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.interval)
                await flush()
            }
        }
        await flush()
    }

    private func flush() async {
        do {
            try await errors.flush(to: store)
        } catch {
            logger.warning("error counts not stored", metadata: ["error": "\(error)"])
        }
    }
}
