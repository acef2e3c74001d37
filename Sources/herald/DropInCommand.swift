import ArgumentParser
import HeraldCore
import HeraldGateway

/// Drop-in mode's set-up: where FCM's host names must resolve, and the CA the fleet must
/// trust for them.
struct DropInCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drop-in",
        abstract: "Set up drop-in mode: FCM's host names resolved to Herald, its constrained CA trusted.",
        subcommands: [Hosts.self, CA.self])

    struct Hosts: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print hosts-file lines and DNS zone records that map FCM's host names to Herald.")
        @Option(help: "The address the names resolve to: Herald's, as the fleet reaches it.") var address = "127.0.0.1"
        @Flag(help: "Mozilla's push service's names too, for a node serving its protocol (--mozilla-push-project).")
        var mozilla = false

        func run() throws {
            let names = DropInHosts.googleHostNames + (mozilla ? DropInHosts.mozillaHostNames : [])
            print("# /etc/hosts (or /etc/netns/<namespace>/hosts):")
            print("\(address)\t\(names.joined(separator: " "))")
            print("")
            print("# DNS zone records (a split-horizon view or a response-policy zone the fleet's resolver serves):")
            let record = address.contains(":") ? "AAAA" : "A"
            for name in names { print("\(name).\t300\tIN\t\(record)\t\(address)") }
        }
    }

    struct CA: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the drop-in CA's path (made if need be) and how to trust it.")
        @Option(name: .customLong("data-dir"), help: "The data directory.") var dataDirectory = "./herald-data"
        @Option(
            name: .customLong("drop-in-hostname"),
            help: "One of the operator's own host names the certificate also names (repeatable); as given to serve.")
        var hostnames: [String] = []
        @Flag(help: "Mozilla's push service's names too, as serve makes them with --mozilla-push-project.")
        var mozilla = false

        func run() throws {
            let certificates = try DropInCertificates.loadOrCreate(
                dataDirectory: dataDirectory, hostnames: hostnames, mozilla: mozilla)
            let path = certificates.caPath
            print("drop-in CA: \(path)")
            print(
                """

                It can sign nothing but FCM's host names and yours (X.509 name constraints), and its key
                was discarded once it signed Herald's certificate. Trust it only on machines of a network
                you control, where those names resolve to Herald.

                Debian, Ubuntu (curl, OpenSSL, Go, most tools):
                  cp \(path) /usr/local/share/ca-certificates/herald-drop-in.crt && update-ca-certificates
                Java (every JVM using the cacerts store):
                  keytool -importcert -cacerts -storepass changeit -noprompt -alias herald-drop-in -file \(path)
                Node.js (firebase-admin for Node):
                  NODE_EXTRA_CA_CERTS=\(path)
                Python (firebase-admin, requests, httpx):
                  cat \(path) >> "$(python3 -m certifi)"   or   SSL_CERT_FILE=<a bundle with it> REQUESTS_CA_BUNDLE=<same>
                Chromium and other NSS programs:
                  certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n herald-drop-in -i \(path)
                Firefox (with --mozilla): the enterprise policy Certificates.Install, or for one profile
                  certutil -d sql:<profile> -A -t C,, -n herald-drop-in -i \(path)
                """)
        }
    }
}
