import HeraldCore
import HeraldHTTP
import Hummingbird

/// A project's pages under `/console/projects/{project}`, for users given the project:
/// each page's routes get the parts of the environment they use, the store as its roles.
struct ProjectPages {
    let environment: HTTPEnvironment
    /// Herald's public address, which new key files point at.
    let publicURL: String

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        let (store, directory, clock) = (environment.store, environment.directory, environment.clock)
        ComposerRoutes(directory: directory, store: store, sender: environment.consoleSender, clock: clock)
            .register(on: pages)
        ScheduleRoutes(directory: directory, store: store).register(on: pages)
        ReportRoutes(directory: directory, stats: store, clock: clock).register(on: pages)
        MessageRoutes(directory: directory, store: store, clock: clock).register(on: pages)
        QuotaRoutes(
            directory: directory, store: store, quotas: environment.quotas, fanouts: environment.fanouts, clock: clock
        ).register(on: pages)
        DeviceRoutes(directory: directory, store: store, clock: clock).register(on: pages)
        CredentialRoutes(
            directory: directory, store: store, clock: clock, eventIDs: environment.eventIDs, publicURL: publicURL
        ).register(on: pages)
    }
}
