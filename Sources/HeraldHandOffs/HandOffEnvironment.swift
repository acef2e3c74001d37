public import HeraldCore
public import HeraldTelemetry
public import Logging

/// What each push service's part of the hand-off works with: the forwarder's configuration,
/// the store, the clock, metrics, the log, and the project error counter of the console's
/// errors page.
struct HandOffEnvironment: Sendable {
    var configuration: HandOffForwarder.Configuration
    var store: any HandOffForwarder.Store
    var clock: any HeraldClock
    var metrics: HeraldMetrics
    var logger: Logger
    /// Counts an error against a project, for the console's errors page.
    var countError: @Sendable (HeraldError, String, Timestamp) -> Void
}
