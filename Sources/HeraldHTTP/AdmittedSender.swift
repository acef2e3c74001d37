public import HeraldCore
public import HeraldDelivery

/// Sends as an app server's v1 send does, for sends that do not come through the send API
/// (the console's composer, scheduled sends): through the project's downstream quota (T1)
/// and the dispatcher, a dry run included.
public struct AdmittedSender: Sendable {
    let admission: DownstreamAdmission
    let dispatcher: Dispatcher
    /// The surface overload refusals are counted under.
    let surface: String

    public init(admission: DownstreamAdmission, dispatcher: Dispatcher, surface: String) {
        self.admission = admission
        self.dispatcher = dispatcher
        self.surface = surface
    }

    /// Sends `request` for the project; answers the message's id.
    public func send(_ request: SendRequest, project: Project, messageID: String? = nil) async throws -> String {
        try await admission.admitting(project, surface: surface) {
            try await dispatcher.send(request, project: project, messageID: messageID)
        }
    }
}

extension HTTPEnvironment {
    /// The console's sends, and the sends it schedules, through this environment's admission
    /// and dispatcher.
    public var consoleSender: AdmittedSender {
        AdmittedSender(admission: admission, dispatcher: dispatcher, surface: "console")
    }
}
