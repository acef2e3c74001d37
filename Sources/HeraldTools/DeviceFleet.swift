import Foundation
public import HeraldProtocol
import NIOCore
import Synchronization

/// Many devices in one process that stay connected the way real ones do: each logs in,
/// acknowledges what it receives, and when its connection ends (a node stopped or died)
/// connects again after a short random pause, through whatever balancer the gateway
/// address names. Used to show that nodes and databases can go away without a device
/// missing a message (`herald bench fleet`, compat/chaos.py).
public struct DeviceFleet: Sendable {
    public var target: BenchTarget
    public var instances: [BenchInstance]
    /// The pause before connecting again, in seconds, chosen at random in this range.
    public var reconnectPause: ClosedRange<Double> = 0.2...2.0

    public init(target: BenchTarget, instances: [BenchInstance]) {
        self.target = target
        self.instances = instances
    }

    /// What a device saw.
    public enum Event: Sendable {
        /// Every device has logged in once.
        case ready
        /// A device logged in again after its connection ended.
        case reconnected(device: Int)
        /// A device received a message (its id as the sender was told it).
        case message(device: Int, id: String)
    }

    /// Keeps every device connected until the task is cancelled.
    public func run(_ report: @escaping @Sendable (Event) -> Void) async {
        let firstLogins = LoginCount()
        let count = instances.count
        await withDiscardingTaskGroup { group in
            for (index, instance) in instances.enumerated() {
                group.addTask {
                    var connected = false
                    while !Task.isCancelled {
                        do {
                            let channel = try await BenchDevice.connect(
                                host: target.gatewayHost, port: target.gatewayPort, localAddress: nil,
                                tls: target.tls, androidID: instance.androidID, securityToken: instance.securityToken
                            ) { stanza, _ in
                                report(.message(device: index, id: Self.messageID(of: stanza)))
                            }
                            if connected {
                                report(.reconnected(device: index))
                            } else {
                                connected = true
                                if firstLogins.value.add(1, ordering: .relaxed).newValue == count { report(.ready) }
                            }
                            try await withTaskCancellationHandler {
                                try await channel.closeFuture.get()
                            } onCancel: {
                                channel.close(promise: nil)
                            }
                        } catch {
                            // Refused or cut off: try again after the pause.
                        }
                        try? await Task.sleep(for: .seconds(Double.random(in: reconnectPause)))
                    }
                }
                // Logins go a few hundred at a time, as a fleet's first connections would.
                if index % 200 == 199 { try? await Task.sleep(for: .milliseconds(100)) }
            }
        }
    }

    /// The id the sender was answered with: Herald names it in the stanza's app data.
    static func messageID(of stanza: McsProto_DataMessageStanza) -> String {
        stanza.appData.first { $0.key == "google.message_id" }?.value ?? stanza.persistentID
    }
}

/// How many of a fleet's devices have logged in once.
private final class LoginCount: Sendable {
    let value = Atomic<Int>(0)
}
