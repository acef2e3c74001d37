import HeraldCore
import HeraldHTTP
import HeraldStorage
import Logging
import ServiceLifecycle

/// Reloads the credential cache and the token-signing secret when the store's credentials
/// change, once a second.
struct CredentialRefresher: Service {
    let directory: CredentialDirectory
    let tokens: AccessTokens
    let store: any CredentialStore
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
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
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }
}
