import ArgumentParser
import Foundation
import HeraldCore
import HeraldStorage
import HeraldWebhooks

/// `herald project webhook add|list|remove|resume` (docs/EVENTS.md).
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook", abstract: "A project's webhooks: endpoints that receive its events, signed.",
        subcommands: [Add.self, List.self, Remove.self, Resume.self])

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a webhook; prints its id and signing secret (shown only now).")

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String
        @Option(help: "The endpoint: https:// (http:// only to a host `herald serve --allow-webhook-host` allows).")
        var url: String
        @Option(help: "Event types to send, comma-separated; default every type.") var events: String?
        @Option(
            name: .customLong("allow-webhook-host"),
            help:
                "A host or range the server allows (its own --allow-webhook-host), so the target is checked as it will."
        )
        var allowedHosts: [String] = []

        func run() async throws {
            let store = try await openStore(storeOptions)
            guard try await store.project(id: projectID) != nil else {
                throw ValidationError("No project \(projectID).")
            }
            // Checked here as the server checks it before each delivery, so that a target it
            // would refuse is refused now, with the way to allow it.
            do {
                _ = try WebhookTargetPolicy(allowedHosts: Swift.Set(allowedHosts)).check(url)
            } catch {
                guard error.unresolved else {
                    throw ValidationError(
                        "The server would refuse this target: \(error). Targets are https:// at public addresses;"
                            + " to allow another host, start `herald serve --allow-webhook-host HOST` and pass this"
                            + " command the same --allow-webhook-host HOST.")
                }
                tell("herald: \(error) now; added anyway, the server looks again before each delivery.")
            }
            var types: Swift.Set<MessageEventType> = []
            for name in (events ?? "").split(separator: ",") {
                guard let type = MessageEventType(rawValue: String(name)) else {
                    throw ValidationError(
                        "Unknown event type \(name); known: \(MessageEventType.allCases.map(\.rawValue).joined(separator: ", "))."
                    )
                }
                types.insert(type)
            }
            let webhook = Webhook.make(
                projectID: projectID, url: url, types: types, cursor: try await store.latestEventSequence(),
                at: SystemClock().now())
            try await store.addWebhook(webhook)
            print("webhook:        \(webhook.id)")
            print("url:            \(webhook.url)")
            print("events:         \(types.isEmpty ? "all" : types.map(\.rawValue).sorted().joined(separator: ","))")
            print("signing secret: \(webhook.secret)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List a project's webhooks, with their last errors.")

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String

        func run() async throws {
            let store = try await openStore(storeOptions)
            for webhook in try await store.webhooks(projectID: projectID) {
                let types =
                    webhook.types.isEmpty ? "all" : webhook.types.map(\.rawValue).sorted().joined(separator: ",")
                print(
                    "\(webhook.id)\t\(webhook.state.rawValue)\t\(webhook.url)\tevents=\(types)\tafter=\(webhook.cursor)"
                )
                if webhook.failures > 0 { print("  failing \(webhook.failures) times in a row") }
                for error in webhook.lastErrors { print("  error: \(error)") }
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a webhook.")

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String
        @Argument(help: "The webhook id.") var webhookID: String

        func run() async throws {
            let store = try await openStore(storeOptions)
            guard try await store.removeWebhook(projectID: projectID, id: webhookID) else {
                throw ValidationError("\(projectID) has no webhook \(webhookID).")
            }
            print("removed \(webhookID)")
        }
    }

    struct Resume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Resume a paused webhook: it carries on from the first event it did not take.")

        @OptionGroup var storeOptions: StoreOptions
        @Argument(help: "The project id.") var projectID: String
        @Argument(help: "The webhook id.") var webhookID: String

        func run() async throws {
            let store = try await openStore(storeOptions)
            guard let webhook = try await store.webhooks(projectID: projectID).first(where: { $0.id == webhookID })
            else { throw ValidationError("\(projectID) has no webhook \(webhookID).") }
            try await store.replaceWebhook(webhook.resumed(at: SystemClock().now()))
            print("resumed \(webhookID) after event \(webhook.cursor)")
        }
    }
}
