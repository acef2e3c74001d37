import HeraldStorage
import Logging
import ServiceLifecycle

/// Moves the SQLite write-ahead log into the database file in the background, a few
/// times a second, so that writers (a fanout above all) do not checkpoint in a transaction;
/// and looks at the log for another process's writes (`lookForOtherWriters`).
struct LogCheckpointer: Service {
    let store: SQLiteStore
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                store.lookForOtherWriters()
                do {
                    try await store.checkpoint()
                } catch is CancellationError {
                    // Shutting down.
                    return
                } catch {
                    logger.warning("checkpoint failed", metadata: ["error": "\(error)"])
                }
                try? await Task.sleep(for: .milliseconds(200))
            }
        }
    }
}
