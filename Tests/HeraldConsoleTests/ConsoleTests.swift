import HTTPTypes
import HeraldConsole
import HeraldCore
import HeraldStorage
import HeraldTestSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// The console's session and CSRF rules: nothing without a session, every form with its
/// session's token, a user only on their projects, the API's and the console's credentials
/// kept apart, sessions in the store (hashed) so every node knows them.
@Suite struct ConsoleTests {
    static let password = "correct horse battery"

    /// A browser's cookies and the session's CSRF token.
    struct Browser: Sendable {
        var cookies: [String: String] = [:]
        var csrf = ""

        var cookieHeader: HTTPFields {
            var fields = HTTPFields()
            if !cookies.isEmpty {
                fields[.cookie] = cookies.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
            }
            return fields
        }

        mutating func keep(_ response: TestResponse) {
            for line in response.headers[values: .setCookie] {
                let pair = line.split(separator: ";")[0].split(separator: "=", maxSplits: 1)
                cookies[String(pair[0])] = pair.count > 1 ? String(pair[1]) : ""
            }
        }

        mutating func get(_ client: any TestClientProtocol, _ uri: String) async throws -> TestResponse {
            let response = try await client.execute(uri: uri, method: .get, headers: cookieHeader)
            keep(response)
            let page = String(buffer: response.body)
            if let range = page.range(of: #"name="csrf" value=""#) {
                csrf = String(page[range.upperBound...].prefix { $0 != "\"" })
            }
            return response
        }

        mutating func post(_ client: any TestClientProtocol, _ uri: String, _ form: String) async throws
            -> TestResponse
        {
            var headers = cookieHeader
            headers[.contentType] = "application/x-www-form-urlencoded"
            let response = try await client.execute(
                uri: uri, method: .post, headers: headers, body: ByteBuffer(string: form))
            keep(response)
            return response
        }

        mutating func signIn(_ client: any TestClientProtocol, name: String, password: String) async throws
            -> TestResponse
        {
            _ = try await get(client, "/console/sign-in")
            let answer = try await post(
                client, "/console/sign-in",
                "csrf=\(csrf)&name=\(name)&password=\(password.replacingOccurrences(of: " ", with: "+"))")
            if answer.status == .seeOther { _ = try await get(client, "/console") }
            return answer
        }
    }

    func server(secure: Bool = false) async throws -> TestServer {
        let server = try await TestServer.make(secureConsole: secure)
        _ = try await TestServer.addProject("other-project", to: server.store, clock: server.clock)
        try await ConsoleAccounts.save(
            name: "ada", password: Self.password, projectIDs: [server.project.id], isAdmin: false,
            store: server.store, now: server.clock.now())
        return server
    }

    /// `server()` with an admin, "root", besides ada.
    func serverWithAdmin() async throws -> TestServer {
        let server = try await server()
        try await ConsoleAccounts.save(
            name: "root", password: Self.password, projectIDs: [], isAdmin: true, store: server.store,
            now: server.clock.now())
        return server
    }

    @Test func nothingOfTheConsoleIsReachableWithoutASession() async throws {
        let server = try await server()
        try await server.test { client in
            var browser = Browser()
            for uri in ["/console", "/console/projects/test-project"] {
                let page = try await browser.get(client, uri)
                #expect(page.status == .found && page.headers[.location] == "/console/sign-in")
            }
            let send = try await browser.post(
                client, "/console/projects/test-project/send", "target=topic&to=news&title=Hi")
            #expect(send.status == .forbidden)
            // An API access token opens no console page.
            let token = try await server.accessToken(client)
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(token)"
            let withToken = try await client.execute(uri: "/console", method: .get, headers: headers)
            #expect(withToken.status == .found)
        }
        #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
    }

    @Test func aWrongPasswordIsRefusedAndARightOneMakesAStrictHttpOnlySession() async throws {
        let server = try await server(secure: true)
        try await server.test { client in
            var browser = Browser()
            let wrong = try await browser.signIn(client, name: "ada", password: "not the password")
            #expect(wrong.status == .unauthorized && browser.cookies[ConsoleRoutes.sessionCookie] == nil)
            let unknown = try await browser.signIn(client, name: "nobody", password: Self.password)
            #expect(unknown.status == .unauthorized)
            // The sign-in form needs the token its page set in a cookie.
            var stranger = Browser()
            let forged = try await stranger.post(
                client, "/console/sign-in", "csrf=guess&name=ada&password=correct+horse+battery")
            #expect(forged.status == .forbidden && stranger.cookies[ConsoleRoutes.sessionCookie] == nil)

            var signedIn = Browser()
            _ = try await signedIn.get(client, "/console/sign-in")
            var headers = signedIn.cookieHeader
            headers[.contentType] = "application/x-www-form-urlencoded"
            let answer = try await client.execute(
                uri: "/console/sign-in", method: .post, headers: headers,
                body: ByteBuffer(string: "csrf=\(signedIn.csrf)&name=ada&password=correct+horse+battery"))
            #expect(answer.status == .seeOther && answer.headers[.location] == "/console")
            let cookie = try #require(
                answer.headers[values: .setCookie].first { $0.hasPrefix(ConsoleRoutes.sessionCookie + "=") })
            #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Secure"))
            #expect(cookie.contains("Path=/console"))
            // The store keeps the session under a hash: the cookie's own value is not a key in it.
            let value = String(cookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1)[1])
            #expect(try await server.store.consoleValue(key: "hbs.\(value)", now: server.clock.now()) == nil)
            let hashed = StorePersistDriver.storedKey("hbs.\(value)")
            #expect(try await server.store.consoleValue(key: hashed, now: server.clock.now()) != nil)
        }
    }

    @Test func aFormWithoutItsSessionsTokenIsRefusedAndOneWithItSends() async throws {
        let server = try await server()
        try await server.test { client in
            var browser = Browser()
            #expect(try await browser.signIn(client, name: "ada", password: Self.password).status == .seeOther)
            let page = try await browser.get(client, "/console/projects/test-project")
            #expect(page.status == .ok && !browser.csrf.isEmpty)
            let form = "target=topic&to=news&title=Hello&data=k%3Dv"
            #expect(try await browser.post(client, "/console/projects/test-project/send", form).status == .forbidden)
            #expect(
                try await browser.post(client, "/console/projects/test-project/send", "csrf=wrong&" + form).status
                    == .forbidden)
            #expect(try await server.store.messageCount(projectID: server.project.id) == 0)
            let sent = try await browser.post(
                client, "/console/projects/test-project/send", "csrf=\(browser.csrf)&" + form)
            #expect(sent.status == .ok && String(buffer: sent.body).contains("Sent: projects/test-project/messages/"))
            #expect(try await server.store.messageCount(projectID: server.project.id) == 1)
            // An invalid message is refused with FCM's reason, and nothing is sent.
            let invalid = try await browser.post(
                client, "/console/projects/test-project/send", "csrf=\(browser.csrf)&target=topic&to=bad+topic!")
            #expect(invalid.status == .badRequest && String(buffer: invalid.body).contains("Invalid topic name"))
            #expect(try await server.store.messageCount(projectID: server.project.id) == 1)
            // The console's cookie is no credential for the API.
            var api = browser.cookieHeader
            api[.contentType] = "application/json"
            let viaAPI = try await client.execute(
                uri: "/v1/projects/test-project/messages:send", method: .post, headers: api,
                body: ByteBuffer(string: #"{"message":{"topic":"news"}}"#))
            #expect(viaAPI.status == .unauthorized)
        }
    }

    @Test func aUserCannotOpenOrActOnAProjectTheyAreNotGiven() async throws {
        let server = try await server()
        try await server.test { client in
            var browser = Browser()
            _ = try await browser.signIn(client, name: "ada", password: Self.password)
            let list = String(buffer: try await browser.get(client, "/console").body)
            #expect(list.contains("test-project") && !list.contains("other-project"))
            #expect(try await browser.get(client, "/console/projects/other-project").status == .notFound)
            #expect(try await browser.get(client, "/console/projects/no-such-project").status == .notFound)
            _ = try await browser.get(client, "/console/projects/test-project")
            let forged = try await browser.post(
                client, "/console/projects/other-project/send", "csrf=\(browser.csrf)&target=topic&to=news&title=x")
            #expect(forged.status == .notFound)
        }
        #expect(try await server.store.messageCount(projectID: "other-project") == 0)
    }

    @Test func aSessionMadeOnOneNodeIsKnownOnAnotherAndEndsAtSignOut() async throws {
        let first = try await server()
        let second = try await TestServer.make(sharing: first)
        let signedIn = try await first.test { client in
            var browser = Browser()
            _ = try await browser.signIn(client, name: "ada", password: Self.password)
            return browser
        }
        let signedOut = try await second.test { client in
            var browser = signedIn
            let page = try await browser.get(client, "/console/projects/test-project")
            #expect(page.status == .ok)
            let signOut = try await browser.post(client, "/console/sign-out", "csrf=\(browser.csrf)")
            #expect(signOut.status == .seeOther)
            return browser
        }
        try await first.test { client in
            for var browser in [signedIn, signedOut] {
                let page = try await browser.get(client, "/console")
                #expect(page.status == .found)
            }
        }
    }
}
