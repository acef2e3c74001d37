import ArgumentParser
import Foundation
import HeraldCore
import HeraldStorage

/// `herald backup`: a copy of the embedded store, taken while the server runs.
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Copy the embedded store to a file while the server runs (SQLite's online backup).",
        discussion: "A PostgreSQL store is backed up with pg_dump or continuous archiving (docs/operations.md).")

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "The file to write (replaced only once the copy is complete and checked).") var to: String

    func run() throws {
        guard storeOptions.storeURL == nil else {
            throw ValidationError("A PostgreSQL store is backed up with pg_dump (docs/operations.md, Backups).")
        }
        let summary = try StoreBackup.backup(dataDirectory: storeOptions.dataDirectory, to: to)
        print(
            "backed up \(summary.bytes) bytes to \(to) (store last opened by Herald \(summary.release.newestWriter?.description ?? "?"))"
        )
    }
}

/// `herald restore`: puts a backup in place of the embedded store, with the server stopped.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Replace the embedded store with a backup (the server must be stopped).",
        discussion: "The store it replaces is kept in the data directory as before-restore-TIME.")

    @OptionGroup var storeOptions: StoreOptions
    @Option(help: "The backup file (herald backup --to).") var from: String

    func run() throws {
        guard storeOptions.storeURL == nil else {
            throw ValidationError(
                "A PostgreSQL store is restored with pg_restore or psql (docs/operations.md, Backups).")
        }
        let summary = try StoreBackup.restore(
            from: from, dataDirectory: storeOptions.dataDirectory, now: Int64(Date().timeIntervalSince1970))
        print(
            "restored \(summary.bytes) bytes into \(storeOptions.dataDirectory); start herald serve to deliver what it holds"
        )
    }
}
