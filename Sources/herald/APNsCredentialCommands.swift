public import ArgumentParser
import Foundation
public import HeraldCore
import HeraldHandOffs
import HeraldStorage

extension APNsCredential.Environment: ExpressibleByArgument {}

/// `herald project apns-key`: a project's token-based credential for Apple's push service.
struct APNsKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-key",
        abstract: "Give a project its APNs signing key (.p8), or remove it; a running server reloads within a second.")
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The project id.") var projectID: String
    @Option(name: .customLong("key-file"), help: "The .p8 file Apple gave for the key.") var keyFile: String?
    @Option(name: .customLong("key-id"), help: "The key's id (10 characters).") var keyID: String?
    @Option(name: .customLong("team-id"), help: "The Apple developer team's id (10 characters).") var teamID: String?
    @Option(name: .customLong("bundle-id"), help: "The app's bundle id, the notifications' apns-topic.")
    var bundleID: String?
    @Option(help: "production, development or both.") var environment: APNsCredential.Environment = .both
    @Flag(help: "Remove the project's signing key instead.") var remove = false

    func run() async throws {
        guard let store = try await apnsStore(storeOptions, projectID: projectID, removing: remove ? .token : nil)
        else { return }
        guard let keyFile, let keyID, let teamID, let bundleID else {
            throw ValidationError("--key-file, --key-id, --team-id and --bundle-id are required.")
        }
        guard let pem = try? String(contentsOfFile: keyFile, encoding: .utf8) else {
            throw ValidationError("Cannot read \(keyFile).")
        }
        try await saveAPNs(into: store) { now throws(APNsCredentialFile.Failure) in
            try APNsCredentialFile.signingKey(
                pem: pem, keyID: keyID, teamID: teamID, bundleID: bundleID, environment: environment,
                projectID: projectID, now: now)
        }
    }
}

/// `herald project apns-certificate`: a project's certificate-based credential for APNs.
struct APNsCertificateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-certificate",
        abstract:
            "Give a project its APNs client certificate (PEM with its key, or PKCS#12 with the password on standard "
            + "input), or remove it.")
    @OptionGroup var storeOptions: StoreOptions
    @Argument(help: "The project id.") var projectID: String
    @Option(name: .customLong("certificate"), help: "The certificate file (.pem, or .p12).") var certificateFile:
        String?
    @Option(name: .customLong("bundle-id"), help: "The app's bundle id (default: the certificate's).")
    var bundleID: String?
    @Option(help: "production, development or both (default: what the certificate is for).")
    var environment: APNsCredential.Environment?
    @Flag(help: "Remove the project's certificate instead.") var remove = false

    func run() async throws {
        guard let store = try await apnsStore(storeOptions, projectID: projectID, removing: remove ? .certificate : nil)
        else { return }
        guard let certificateFile else { throw ValidationError("--certificate is required.") }
        guard let data = FileManager.default.contents(atPath: certificateFile) else {
            throw ValidationError("Cannot read \(certificateFile).")
        }
        let bytes = [UInt8](data)
        let isPEM = String(decoding: bytes, as: UTF8.self).contains("-----BEGIN")
        // A PKCS#12 file's password comes on standard input, never on the command line.
        let password = isPEM ? nil : ConsoleCommand.AddUser.readPassword() ?? ""
        try await saveAPNs(into: store) { now throws(APNsCredentialFile.Failure) in
            try APNsCredentialFile.certificate(
                bytes: bytes, password: password, bundleID: bundleID, environment: environment,
                projectID: projectID, now: now)
        }
    }
}

/// The store, once `projectID` names a project; with `kind`, removes the project's
/// credential of that kind instead, says so and answers nil.
private func apnsStore(_ options: StoreOptions, projectID: String, removing kind: APNsCredential.Kind?)
    async throws -> (any APNsCredentialStore)?
{
    let store = try await openStore(options)
    guard try await store.project(id: projectID) != nil else { throw ValidationError("No project \(projectID).") }
    guard let kind else { return store }
    let removed = try await store.removeAPNsCredential(projectID: projectID, kind: kind)
    print(removed ? "removed the APNs \(kind.rawValue) credential of \(projectID)" : "\(projectID) has none")
    return nil
}

/// Stores the credential `make` reads and checks, or turns its refusal into the command's error.
private func saveAPNs(
    into store: any APNsCredentialStore, _ make: (Timestamp) throws(APNsCredentialFile.Failure) -> APNsCredential
) async throws {
    do {
        let credential = try make(SystemClock().now())
        try await store.setAPNsCredential(credential)
        print("\(credential.projectID): APNs \(credential.summary)")
    } catch let failure as APNsCredentialFile.Failure {
        throw ValidationError(failure.description)
    }
}
