import HTTPTypes
import HeraldConsole
import HeraldCore
import HeraldStorage
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The quota page: each limit with its setting and use, errors counted per project and code
/// (and only for projects that exist), and limits changed by admins only (SEMANTICS T1).
@Suite struct ConsoleQuotaTests {
    @Test func anAdminChangesALimitItsRefusalsAreCountedByCodeAndOthersMayOnlyLook() async throws {
        let server = try await ConsoleTests().serverWithAdmin()
        let quotas = "/console/projects/test-project/quotas"
        try await server.test { client in
            var ada = ConsoleTests.Browser()
            _ = try await ada.signIn(client, name: "ada", password: ConsoleTests.password)
            let seen = try await ada.get(client, quotas)
            #expect(seen.status == .ok && String(buffer: seen.body).contains("Downstream messages per minute"))
            #expect(!String(buffer: seen.body).contains("Save limits"))
            let refused = try await ada.post(client, quotas, "csrf=\(ada.csrf)&downstream-per-minute=2")
            #expect(refused.status == .forbidden)

            var root = ConsoleTests.Browser()
            _ = try await root.signIn(client, name: "root", password: ConsoleTests.password)
            _ = try await root.get(client, quotas)
            let invalid = try await root.post(client, quotas, "csrf=\(root.csrf)&downstream-per-minute=-5")
            #expect(invalid.status == .badRequest)
            #expect(try await server.store.project(id: "test-project")?.settings.downstreamPerMinute == 600_000)
            let saved = try await root.post(client, quotas, "csrf=\(root.csrf)&downstream-per-minute=2")
            #expect(saved.status == .ok && String(buffer: saved.body).contains("Limits saved."))
            #expect(try await server.store.project(id: "test-project")?.settings.downstreamPerMinute == 2)

            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(try await server.accessToken(client))"
            headers[.contentType] = "application/json"
            var statuses: [HTTPResponse.Status] = []
            for project in ["test-project", "test-project", "test-project", "no-such-project"] {
                let answer = try await client.execute(
                    uri: "/v1/projects/\(project)/messages:send", method: .post, headers: headers,
                    body: ByteBuffer(string: #"{"message":{"topic":"news"}}"#))
                statuses.append(answer.status)
            }
            #expect(statuses.prefix(3) == [.ok, .ok, .tooManyRequests])
            try await server.node.environment.errors.flush(to: server.store)
            let counts = try await server.store.errorCounts(projectID: "test-project", since: Timestamp(seconds: 0))
            #expect(counts.map(\.code) == ["QUOTA_EXCEEDED"] && counts.map(\.count) == [1])
            // A path naming no project leaves no count behind.
            #expect(
                try await server.store.errorCounts(projectID: "no-such-project", since: Timestamp(seconds: 0)).isEmpty)
            let page = String(buffer: try await ada.get(client, quotas).body)
            #expect(page.contains("<th scope=\"row\">QUOTA_EXCEEDED</th><td>429</td><td>1</td><td>1</td>"))
            #expect(page.contains("<th scope=\"row\">Downstream messages per minute</th><td>2</td><td>2</td>"))
        }
    }
}
