import Synchronization

/// A name for each statement text, the same for as long as the process runs.
final class PreparedQueryNames: Sendable {
    private let names = Mutex<[String: String]>([:])

    func name(for sql: String) -> String {
        names.withLock { names in
            if let name = names[sql] { return name }
            let name = "herald_\(names.count + 1)"
            names[sql] = name
            return name
        }
    }
}
