import HeraldCore
import HeraldHTTP
import HeraldStorage
import Logging
import ServiceLifecycle

/// Reloads the credential cache and the token-signing secret when the store's credentials
/// change: when a write changed them (`WorkSignals`), at most once a `pace`, and at least
/// every `WorkWaiter.defaultFallback`; once a `pace` on a store that gives no signal.
struct CredentialRefresher: Service {
    let directory: CredentialDirectory
    let tokens: AccessTokens
    let store: any CredentialStore
    let work: WorkSignals?
    let logger: Logger

    /// The least time between two looks.
    static let pace: Duration = .seconds(1)

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var waiter = WorkWaiter(.credentials, of: work, pace: Self.pace, polling: Self.pace)
            while !Task.isCancelled {
                let mark = waiter.mark()
                do {
                    if try await directory.reload(from: store) {
                        tokens.use(
                            try await SecretRotation.load(named: HeraldNode.signingSecretName, from: store) {
                                SecureRandom.bytes(32)
                            })
                        logger.info("credentials reloaded")
                    }
                } catch is CancellationError {
                    // Shutting down.
                    return
                } catch {
                    logger.warning("credential reload failed", metadata: ["error": "\(error)"])
                }
                await waiter.wait(after: mark)
            }
        }
    }
}
