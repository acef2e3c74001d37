public import HeraldCore
public import HeraldStorage
public import HeraldTelemetry
public import Logging

/// What each push service's part of the hand-off works with: the forwarder's configuration,
/// the store, the clock, metrics, the log, and the project errors the console's errors page
/// shows.
struct HandOffEnvironment: Sendable {
    var configuration: HandOffForwarder.Configuration
    var store: any HandOffForwarder.Store
    var clock: any HeraldClock
    var metrics: HeraldMetrics
    var logger: Logger
    /// Counts errors against projects, for the console's errors page.
    var errors: ErrorLog
}
