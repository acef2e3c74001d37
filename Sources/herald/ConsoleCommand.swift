import ArgumentParser
import HeraldConsole
import HeraldCore
import HeraldServer
import HeraldStorage

#if canImport(Glibc)
    import Glibc
#endif

struct ConsoleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "console", abstract: "Manage the users of the web console (at /console).",
        subcommands: [AddUser.self, Users.self])

    struct AddUser: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "add-user",
            abstract: "Create a console user, or give an existing one a new password and projects.",
            discussion: """
                The password is read from standard input when it is not a terminal (its first line), \
                so that scripts can set it; at a terminal it is asked for without echo.
                """)

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The user's name.") var name: String
        @Option(name: .customLong("project"), help: "A project the user may open (repeatable).")
        var projects: [String] = []
        @Flag(help: "The user may open every project and edit limits.") var admin = false

        func run() async throws {
            guard let password = Self.readPassword() else { throw ValidationError("no password given") }
            let store = try await openStore(storeOptions)
            do {
                let user = try await ConsoleAccounts.save(
                    name: name, password: password, projectIDs: projects, isAdmin: admin, store: store,
                    now: SystemClock().now())
                print("console user \(user.name): \(user.isAdmin ? "admin" : user.projectIDs.joined(separator: ", "))")
            } catch let refusal as ConsoleAccounts.Refusal {
                throw ValidationError(refusal.description)
            }
        }

        static func readPassword() -> String? {
            if isatty(STDIN_FILENO) == 0 { return readLine(strippingNewline: true) }
            guard let typed = getpass("Password: ") else { return nil }
            return String(cString: typed)
        }
    }

    struct Users: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the console's users.")
        @OptionGroup var storeOptions: StoreOptions

        func run() async throws {
            for user in try await openStore(storeOptions).consoleUsers() {
                print("\(user.name)\t\(user.isAdmin ? "admin" : user.projectIDs.joined(separator: ","))")
            }
        }
    }
}
