import HTTPTypes
import HeraldConsole
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The devices page: a token of the user's project is found with what is known of it; a
/// token of another project is not found, and nothing of it is shown.
@Suite struct ConsoleDeviceTests {
    @Test func aTokenIsFoundOnlyInItsOwnProject() async throws {
        let server = try await ConsoleTests().server()
        let own = try await registeredToken(server.store, projectID: "test-project")
        let other = try await registeredToken(server.store, projectID: "other-project")
        _ = try await server.store.subscribe(
            TopicSubscription(projectID: "test-project", token: own, topic: "news", createdAt: server.clock.now()),
            limit: 10)
        let devices = "/console/projects/test-project/devices"
        try await server.test { client in
            var ada = ConsoleTests.Browser()
            _ = try await ada.signIn(client, name: "ada", password: ConsoleTests.password)
            _ = try await ada.get(client, devices)
            let found = try await ada.post(client, devices, "csrf=\(ada.csrf)&token=\(own)")
            let page = String(buffer: found.body)
            #expect(found.status == .ok && page.contains("<td>com.example.app</td>") && page.contains("<td>news</td>"))
            #expect(page.contains("<th scope=\"row\">news</th><td>1</td>"))
            let elsewhere = try await ada.post(client, devices, "csrf=\(ada.csrf)&token=\(other)")
            #expect(elsewhere.status == .notFound && !String(buffer: elsewhere.body).contains("com.example.app"))
            #expect(try await ada.post(client, devices, "token=\(own)").status == .forbidden)
        }
    }
}
