import HeraldCore
import HeraldHTTP

extension HTTPEnvironment {
    /// Sends as the console does, for the composer and for scheduled sends: through the
    /// project's downstream quota (T1) and the dispatcher, as the API's v1 send does, a dry
    /// run included.
    func consoleSend(_ request: SendRequest, project: Project, messageID: String? = nil) async throws -> String {
        try await admittingDownstream(project, surface: "console") {
            try await dispatcher.send(request, project: project, messageID: messageID)
        }
    }
}
