import HeraldCore
import Hummingbird

extension Authenticator {
    /// Runs an Instance ID request (`/iid/…`) for the project its server key or bearer
    /// access token names; without one, answers 401 `{"error": "UNAUTHENTICATED"}` as the
    /// Instance ID API does.
    func instanceIDRequest(_ request: Request, _ body: (Project) async throws -> Response) async throws -> Response {
        let project: Project
        do {
            project = try await legacyProject(authorization: request.headers[.authorization])
        } catch {
            return Response.json(.stringObject([("error", "UNAUTHENTICATED")]), status: .unauthorized)
        }
        return try await body(project)
    }
}
