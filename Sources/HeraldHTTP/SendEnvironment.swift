public import HeraldDelivery
public import HeraldStorage
public import HeraldTelemetry
public import Logging

/// What the send routes need (`SendRoutes`, `LegacySendRoutes`): the caller's credentials,
/// the admission of its sends and the dispatcher they go to.
public struct SendEnvironment: Sendable {
    public var authenticator: Authenticator
    /// The overload gate, the downstream quota (T1) and the lanes of every send.
    public var admission: DownstreamAdmission
    public var dispatcher: Dispatcher
    /// Where a legacy send's `notification_key` finds its device group.
    public var groups: any TopicStore
    public var metrics: HeraldMetrics
    public var logger: Logger
}
