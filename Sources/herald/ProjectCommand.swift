import ArgumentParser
import Foundation
import HeraldCore
import HeraldServer
import HeraldStorage
import Logging

struct ProjectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "project", abstract: "Create and manage projects and their credentials.",
        subcommands: [
            Create.self, List.self, Show.self, Set.self, Delete.self, RotateKey.self, RotateSecret.self,
            APNsKeyCommand.self, APNsCertificateCommand.self, FCMRelayCommand.self, WebPushKeyCommand.self,
            WebhookCommand.self,
        ])

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a project and write its service-account key file.")

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String
        @Option(name: .customLong("public-url"), help: "Herald's URL, written into the key file as token_uri's base.")
        var publicURL = "http://127.0.0.1:8080"
        @Option(name: .customLong("key-dir"), help: "Where to write <project-id>-service-account.json.")
        var keyDirectory = "."
        @Flag(
            name: .customLong("drop-in"),
            help: "Write Google's token URL into the key file, for SDKs reaching Herald in drop-in mode.")
        var dropIn = false

        func run() async throws {
            let administration = ProjectAdministration(store: try await openStore(storeOptions))
            let issued = try await administration.createProject(
                id: projectID, publicURL: dropIn ? "https://oauth2.googleapis.com" : publicURL,
                keyFileDirectory: keyDirectory)
            print("project:        \(issued.project.id)")
            print("project number: \(issued.project.number)  (sender id)")
            print("api key:        \(issued.project.apiKey)")
            print("server key:     \(issued.project.serverKey)")
            print("key id:         \(issued.key.id)")
            print("key file:       \(issued.keyFilePath)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List projects.")
        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            let store = try await openStore(storeOptions)
            for project in try await store.projects() {
                print("\(project.id)\t\(project.number)")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a project, its keys and its limits.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String

        func run() async throws {
            let store = try await openStore(storeOptions)
            guard let project = try await store.project(id: projectID) else {
                throw ValidationError("No project \(projectID).")
            }
            print("project:        \(project.id)")
            print("project number: \(project.number)  (sender id)")
            print("api key:        \(project.apiKey)")
            print("server key:     \(project.serverKey)")
            for key in try await store.serviceAccountKeys(projectID: projectID) {
                print("key:            \(key.id)  \(key.clientEmail)  \(key.isActive ? "active" : "revoked")")
            }
            print("limits:")
            for setting in ProjectSettings.names {
                print("  \(setting.name) = \(project.settings[keyPath: setting.keyPath])")
            }
            print("  \(ProjectSettings.webPushKeysName) = \(project.settings.webPushKeys.joined(separator: ","))")
            print("  \(ProjectSettings.perDeviceEventsName) = \(project.settings.perDeviceEvents)")
            print("  \(ProjectSettings.relayTopicsName) = \(project.settings.relayTopics ? "on" : "off")")
            let apns = try await store.apnsCredentials(projectID: projectID)
            print("apns credentials:\(apns.isEmpty ? " none" : "")")
            for credential in apns { print("  \(credential.summary)") }
            let relay = try await store.fcmRelayCredential(projectID: projectID)
            print("fcm relay: \(relay?.summary ?? "none")")
            let webPushKey = try await store.webPushKey(projectID: projectID)
            print("web push key (getToken's vapidKey): \(webPushKey?.applicationServerKey ?? "none")")
            let shown = 100
            let web = try await store.webRegistrations(projectID: projectID, limit: shown + 1)
            print("web registrations (push channels of browsers and Web Push receivers):\(web.isEmpty ? " none" : "")")
            for registration in web.prefix(shown) {
                // The site a browser's channel was made for: its subtype is wp:<origin>#<id>.
                let site = registration.subtype.map { $0.hasPrefix("wp:") ? String($0.dropFirst(3)) : $0 }
                print(
                    "  \(registration.token.prefix(12))…  device \(registration.androidID)  "
                        + "\(site?.split(separator: "#").first.map(String.init) ?? registration.appID)  "
                        + "\(registration.webKeys?.coding ?? "")"
                        + (registration.webPushEndpoint.map { "  at \(WebOrigin.of($0))" } ?? ""))
            }
            if web.count > shown { print("  (the first \(shown) shown)") }
        }
    }

    struct Set: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a project's limits; a running server applies them within a second.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String
        @Argument(help: "name=value pairs, e.g. max-pending=50 (see herald project show).") var assignments: [String]

        func run() async throws {
            let store = try await openStore(storeOptions)
            guard var settings = try await store.project(id: projectID)?.settings else {
                throw ValidationError("No project \(projectID).")
            }
            for assignment in assignments {
                do {
                    try settings.apply(assignment)
                } catch {
                    throw ValidationError(error.description)
                }
            }
            _ = try await store.updateSettings(settings, projectID: projectID)
            print("updated \(projectID): \(assignments.joined(separator: " "))")
        }
    }

    struct Delete: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a project with its keys and messages.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String

        func run() async throws {
            guard try await openStore(storeOptions).deleteProject(id: projectID) else {
                throw ValidationError("No project \(projectID).")
            }
            print("deleted \(projectID)")
        }
    }

    struct RotateKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-key",
            abstract: "Add a service-account key (writing a new key file) and optionally revoke an old one.")
        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String
        @Option(help: "A key id to revoke once the new key exists.") var revoke: String?
        @Flag(name: .customLong("revoke-only"), help: "Only revoke --revoke; make no new key.")
        var revokeOnly = false
        @Option(name: .customLong("public-url"), help: "Herald's URL, written into the key file.")
        var publicURL = "http://127.0.0.1:8080"
        @Option(name: .customLong("key-dir"), help: "Where to write the key file.")
        var keyDirectory = "."

        func run() async throws {
            let administration = ProjectAdministration(store: try await openStore(storeOptions))
            if revokeOnly {
                guard let revoke else { throw ValidationError("--revoke-only needs --revoke KEY-ID.") }
                try await administration.revokeKey(projectID: projectID, keyID: revoke)
                print("revoked \(revoke)")
                return
            }
            let issued = try await administration.rotateKey(
                projectID: projectID, revoking: revoke, publicURL: publicURL, keyFileDirectory: keyDirectory)
            print("key id:   \(issued.key.id)")
            print("key file: \(issued.keyFilePath)")
            if let revoke { print("revoked:  \(revoke)") }
        }
    }
}

extension ProjectCommand {
    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: """
                Replace the server-wide secret access and installation tokens are signed with; \
                tokens signed with the old one work for at most an hour more.
                """)

        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            try await ProjectAdministration(store: try await openStore(storeOptions)).rotateSigningSecret()
            print("rotated the token-signing secret; the old one is accepted for one more hour")
        }
    }
}

func openStore(_ options: StoreOptions) async throws -> any HeraldStore {
    guard let url = options.storeURL else {
        let database = (options.dataDirectory as NSString).appendingPathComponent("herald.sqlite")
        if !FileManager.default.fileExists(atPath: database) {
            // The commonest first-hour mistake: a command run from another directory than the
            // server's makes a store of its own, which the server never reads.
            let path = URL(fileURLWithPath: options.dataDirectory).standardizedFileURL.path
            tell(
                "herald: no store in \(path) yet; making a new one. A running `herald serve` sees what this"
                    + " command writes only if it uses the same --data-dir.")
        }
        return try SQLiteStore(dataDirectory: options.dataDirectory)
    }
    guard let location = PostgresStore.Location(url: url) else {
        throw ValidationError("not a postgres:// URL: \(url)")
    }
    var logger = Logger(label: "herald.cli")
    logger.logLevel = .warning
    // The command line claims nothing in a shared store; its node name only appears in logs.
    let store = PostgresStore(location, nodeID: "cli", logger: logger, connections: 2)
    // A command ends with its process: the pool runs until then.
    Task { await store.run() }
    try await store.prepare()
    return store
}
