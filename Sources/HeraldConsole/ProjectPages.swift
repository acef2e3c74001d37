import HeraldCore
import HeraldHTTP
import Hummingbird

/// A project's pages under `/console/projects/{project}`, for users given the project.
struct ProjectPages {
    let environment: HTTPEnvironment
    /// Herald's public address, which new key files point at.
    let publicURL: String

    func register(on pages: RouterGroup<ConsoleRequestContext>) {
        ComposerRoutes(environment: environment).register(on: pages)
        ScheduleRoutes(environment: environment).register(on: pages)
        ReportRoutes(environment: environment).register(on: pages)
        MessageRoutes(environment: environment).register(on: pages)
        QuotaRoutes(environment: environment).register(on: pages)
        DeviceRoutes(environment: environment).register(on: pages)
        CredentialRoutes(environment: environment, publicURL: publicURL).register(on: pages)
    }
}
