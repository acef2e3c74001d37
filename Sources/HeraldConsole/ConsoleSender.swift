public import HeraldCore
public import HeraldDelivery
public import HeraldHTTP

/// Sends as the console does, for the composer and for scheduled sends: through the
/// project's downstream quota (T1) and the dispatcher, as the API's v1 send does, a dry run
/// included.
public struct ConsoleSender: Sendable {
    let admission: DownstreamAdmission
    let dispatcher: Dispatcher

    public init(admission: DownstreamAdmission, dispatcher: Dispatcher) {
        self.admission = admission
        self.dispatcher = dispatcher
    }

    /// Sends `request` for the project; answers the message's id.
    func send(_ request: SendRequest, project: Project, messageID: String? = nil) async throws -> String {
        try await admission.admitting(project, surface: "console") {
            try await dispatcher.send(request, project: project, messageID: messageID)
        }
    }
}

extension HTTPEnvironment {
    /// The console's sends through this environment's admission and dispatcher.
    public var consoleSender: ConsoleSender { ConsoleSender(admission: admission, dispatcher: dispatcher) }
}
