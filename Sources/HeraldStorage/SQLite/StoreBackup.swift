import Foundation
import GRDB
import HeraldCore

/// Copies of the embedded store: `backup` while a server runs on it (SQLite's online
/// backup, one consistent snapshot of every committed transaction), `restore` with the
/// server stopped.
public enum StoreBackup {
    /// What a backup or restore copied.
    public struct Summary: Sendable {
        public var bytes: Int
        public var release: StoreRelease
    }

    /// Why a file cannot be restored.
    public struct Unusable: Error, CustomStringConvertible {
        public var description: String
    }

    static func storePath(_ dataDirectory: String) -> String {
        (dataDirectory as NSString).appendingPathComponent("herald.sqlite")
    }

    /// Copies the store in `dataDirectory` to `destination` (a new file, readable by its
    /// owner alone, replaced whole only once complete and checked).
    public static func backup(dataDirectory: String, to destination: String) throws -> Summary {
        let source = storePath(dataDirectory)
        guard FileManager.default.fileExists(atPath: source) else {
            throw Unusable(description: "no store in \(dataDirectory) (no herald.sqlite)")
        }
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        let partial = destination + ".partial"
        try? FileManager.default.removeItem(atPath: partial)
        do {
            let reader = try DatabaseQueue(path: source, configuration: configuration)
            let copy = try DatabaseQueue(path: partial)
            // All pages in one step: the copy is the snapshot of one read transaction.
            try reader.backup(to: copy)
            try reader.close()
            // One self-contained file: no write-ahead log beside it.
            try copy.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA journal_mode = DELETE") }
            try copy.close()
            let summary = try check(partial)
            try? FileManager.default.removeItem(atPath: destination)
            try FileManager.default.moveItem(atPath: partial, toPath: destination)
            return summary
        } catch {
            try? FileManager.default.removeItem(atPath: partial)
            throw error
        }
    }

    /// Puts the backup at `source` in place of the store in `dataDirectory`, which no server
    /// may be running on (`DataDirectoryLock`). The store it replaces, if any, is moved to
    /// `before-restore-TIME` in the data directory. Nothing changes when `source` is not a
    /// whole Herald store this release can open.
    public static func restore(from source: String, dataDirectory: String, now: Int64) throws -> Summary {
        let summary = try check(source)
        try PrivateDirectory.prepare(dataDirectory)
        let lock = try DataDirectoryLock(dataDirectory: dataDirectory)
        defer { withExtendedLifetime(lock) {} }
        let manager = FileManager.default
        let target = storePath(dataDirectory)
        let incoming = target + ".restoring"
        try? manager.removeItem(atPath: incoming)
        try manager.copyItem(atPath: source, toPath: incoming)
        let existing = ["", "-wal", "-shm"].map { target + $0 }.filter { manager.fileExists(atPath: $0) }
        if !existing.isEmpty {
            let aside = (dataDirectory as NSString).appendingPathComponent("before-restore-\(now)")
            try manager.createDirectory(atPath: aside, withIntermediateDirectories: true)
            for path in existing {
                try manager.moveItem(
                    atPath: path,
                    toPath: (aside as NSString).appendingPathComponent((path as NSString).lastPathComponent))
            }
        }
        try manager.moveItem(atPath: incoming, toPath: target)
        try PrivateDirectory.restrict(dataDirectory)
        return summary
    }

    /// Whether `path` is a whole Herald store that this release can open: SQLite's quick
    /// check passes, it has Herald's tables, and its release marks allow this release.
    static func check(_ path: String) throws -> Summary {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            let bytes = attributes[.size] as? Int
        else { throw Unusable(description: "\(path) cannot be read") }
        var configuration = Configuration()
        configuration.readonly = true
        let database: DatabaseQueue
        do {
            database = try DatabaseQueue(path: path, configuration: configuration)
        } catch {
            throw Unusable(description: "\(path) is not a SQLite database")
        }
        defer { try? database.close() }
        let release: StoreRelease = try database.read { db in
            guard (try? String.fetchOne(db, sql: "PRAGMA quick_check")) == "ok" else {
                throw Unusable(description: "\(path) is damaged (SQLite's quick_check fails)")
            }
            guard try db.tableExists("grdb_migrations"), try db.tableExists("projects"),
                try db.tableExists("device_queue")
            else { throw Unusable(description: "\(path) is not a Herald store") }
            return try SQLiteStore.release(db)
        }
        try release.check()
        return Summary(bytes: bytes, release: release)
    }
}
