import Foundation
public import HeraldCore
public import HeraldStorage
public import Logging

/// A node's id among the nodes sharing a store, and the check that no live node holds it.
public enum NodeIdentity {
    /// The file in the data directory that keeps a derived id across restarts.
    public static let fileName = "node-id"

    /// The id of a node started without `--node-id`: the host's name and a random suffix,
    /// made once and kept in `<dataDirectory>/node-id`. Two nodes on one host with their
    /// own data directories get different ids; a restart with the same directory the same.
    public static func stable(dataDirectory: String) throws -> String {
        let path = URL(fileURLWithPath: dataDirectory).appendingPathComponent(fileName).path
        if let kept = try? String(contentsOfFile: path, encoding: .utf8) {
            let id = kept.trimmingCharacters(in: .whitespacesAndNewlines)
            if !id.isEmpty { return id }
        }
        let host = String(
            ProcessInfo.processInfo.hostName.prefix(40).map { $0.isASCII && ($0.isLetter || $0.isNumber) ? $0 : "-" })
        let id = "\(host.isEmpty ? "node" : host)-\(SecureRandom.token(bytes: 4))"
        try PrivateDirectory.prepare(dataDirectory)
        guard
            FileManager.default.createFile(
                atPath: path, contents: Data((id + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        return id
    }

    /// Where this process runs, as other nodes are told when they ask for its id.
    public static func address(httpHost: String, httpPort: Int) -> String {
        "host \(ProcessInfo.processInfo.hostName), pid \(ProcessInfo.processInfo.processIdentifier), "
            + "HTTP \(httpHost):\(httpPort)"
    }

    /// A live node holds the id this node asked for.
    public struct InUse: Error, CustomStringConvertible {
        public var holder: NodeRecord
        public var secondsSinceHeartbeat: Double

        public var description: String {
            "node id \"\(holder.id)\" is held by a live node (\(holder.address.isEmpty ? "address unknown" : holder.address)"
                + "; last heartbeat \(String(format: "%.1f", secondsSinceHeartbeat)) s ago): "
                + "give this node another --node-id, or stop that node first"
        }
    }

    /// Returns once no live node holds the store's node id; throws `InUse` when one does.
    /// A recent heartbeat may be this node's own from before a crash, so it is watched: a
    /// heartbeat that moves on is a live node's, one that ages past `deadAfterMilliseconds`
    /// was left by a process that is gone.
    public static func ensureUnclaimed(
        _ cluster: any Cluster, deadAfterMilliseconds: Int64, clock: any HeraldClock,
        poll: Duration = .milliseconds(250), logger: Logger
    ) async throws {
        guard let first = try await cluster.node(cluster.nodeID) else { return }
        var waitLogged = false
        while clock.now().milliseconds - first.heartbeatAt.milliseconds < deadAfterMilliseconds {
            if !waitLogged {
                logger.info(
                    "node id has a recent heartbeat: watching whether its holder is alive",
                    metadata: ["node": "\(first.id)", "address": "\(first.address)"])
                waitLogged = true
            }
            try await Task.sleep(for: poll)
            guard let latest = try await cluster.node(cluster.nodeID) else { return }
            if latest.heartbeatAt != first.heartbeatAt {
                throw InUse(
                    holder: latest,
                    secondsSinceHeartbeat: Double(clock.now().milliseconds - latest.heartbeatAt.milliseconds) / 1000)
            }
        }
    }
}
