public import ArgumentParser
import Foundation
import HeraldCore
import HeraldHandOffs
import HeraldStorage

/// `herald project fcm-relay`: a project's Google service-account key, with which Herald
/// hands messages for Google's tokens to FCM (docs/fcm-relay.md).
struct FCMRelayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fcm-relay",
        abstract:
            "Give a project the Google service-account key its messages to Google's tokens are handed to FCM with, "
            + "or remove it; a running server reloads within a second.")
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The project id.") var projectID: String
    @Option(name: .customLong("service-account"), help: "The service-account key file Google gave (JSON).")
    var serviceAccount: String?
    @Flag(help: "Remove the project's key instead.") var remove = false

    func run() async throws {
        let store = try await openStore(storeOptions)
        guard try await store.project(id: projectID) != nil else { throw ValidationError("No project \(projectID).") }
        if remove {
            let removed = try await store.removeFCMRelayCredential(projectID: projectID)
            print(removed ? "removed the FCM relay key of \(projectID)" : "\(projectID) has none")
            return
        }
        guard let serviceAccount else { throw ValidationError("--service-account or --remove is required.") }
        guard let data = FileManager.default.contents(atPath: serviceAccount) else {
            throw ValidationError("Cannot read \(serviceAccount).")
        }
        do {
            let credential = try FCMServiceAccountFile.credential(
                bytes: [UInt8](data), projectID: projectID, now: SystemClock().now())
            try await store.setFCMRelayCredential(credential)
            print("\(projectID): FCM relay \(credential.summary)")
        } catch let failure as FCMServiceAccountFile.Failure {
            throw ValidationError(failure.description)
        }
    }
}
