public import ArgumentParser
import HeraldCore
import HeraldProtocol
import HeraldStorage

/// `herald project web-push-key`: the project's application server key for Web Push, which
/// its web app subscribes browsers with (getToken's `vapidKey`) and Herald signs the messages
/// it hands to their push services with (docs/guide/web-push.md); made the first time.
struct WebPushKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "web-push-key",
        abstract:
            "Show the project's Web Push application server key (getToken's vapidKey), making it the first time.")
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The project id.") var projectID: String

    func run() async throws {
        let store = try await openStore(storeOptions)
        guard try await store.project(id: projectID) != nil else { throw ValidationError("No project \(projectID).") }
        if let key = try await store.webPushKey(projectID: projectID) {
            print(key.applicationServerKey)
        } else {
            let made = VAPID.makeKey(projectID: projectID, at: SystemClock().now())
            print(try await store.keepWebPushKey(made).applicationServerKey)
        }
    }
}
