import Foundation
import GRDB
import GRDBSQLite
import HeraldCore

/// Writing queue rows with SQLite's own calls, and the stanzas a batch shares.
extension SQLiteStore {
    /// Runs `sql`, whose one `IN (?)` takes `values`, in chunks of 500 values (well under
    /// SQLite's limit on bound parameters), and hands every row to `body`. `before` and
    /// `after` bind the statement's other parameters, around the `IN` list.
    static func forEachRow(
        _ db: Database, _ sql: String, before: [any DatabaseValueConvertible] = [],
        of values: [some DatabaseValueConvertible], after: [any DatabaseValueConvertible] = [],
        _ body: (ColumnReader) throws -> Void
    ) throws {
        for start in stride(from: 0, to: values.count, by: 500) {
            var chunk: [any DatabaseValueConvertible] = Array(values[start..<min(start + 500, values.count)])
            // Lists are padded with their last value to a power of two (or 500), so that a
            // statement compiled once serves every list of its size class.
            let size = min(500, 1 << (Int.bitWidth - (chunk.count - 1).leadingZeroBitCount))
            chunk += Array(repeating: chunk[chunk.count - 1], count: size - chunk.count)
            let marks = Array(repeating: "?", count: size).joined(separator: ", ")
            try db.forEachCached(
                sql: sql.replacingOccurrences(of: "IN (?)", with: "IN (\(marks))"),
                arguments: StatementArguments(before + chunk + after), body)
        }
    }

    /// Inserts a queue entry; answers its sequence number. The values are bound with
    /// SQLite's own calls: a fanout inserts hundreds of thousands of rows, and building
    /// an argument array per row cost more than SQLite's work.
    /// A stanza that other rows share is stored once, as `stanzaID`, and the row's own is empty.
    @discardableResult
    static func insert(_ entry: QueuedMessage, stanzaID: Int64? = nil, _ db: Database) throws -> Int64 {
        let statement = try db.cachedStatement(
            sql: """
                INSERT INTO device_queue
                    (android_id, token, persistent_id, message_id, project_id, stanza, created_at, expires_at,
                     collapse_key, is_high_priority, app_id, analytics_label, deleted_count, stanza_id, receipt_id,
                     keeps_events)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """)
        return try statement.insert { handle in
            sqlite3_bind_int64(handle, 1, Int64(bitPattern: entry.androidID))
            bindText(handle, 2, entry.token)
            bindText(handle, 3, entry.persistentID)
            bindText(handle, 4, entry.messageID)
            if entry.projectID.isEmpty { sqlite3_bind_null(handle, 5) } else { bindText(handle, 5, entry.projectID) }
            bindBlob(handle, 6, stanzaID == nil ? entry.stanza : [])
            sqlite3_bind_int64(handle, 7, entry.createdAt.milliseconds)
            sqlite3_bind_int64(handle, 8, entry.expiresAt.milliseconds)
            if let key = entry.collapseKey { bindText(handle, 9, key) } else { sqlite3_bind_null(handle, 9) }
            sqlite3_bind_int64(handle, 10, entry.isHighPriority ? 1 : 0)
            bindText(handle, 11, entry.appID)
            bindText(handle, 12, entry.analyticsLabel)
            sqlite3_bind_int64(handle, 13, Int64(entry.deletedCount))
            if let stanzaID { sqlite3_bind_int64(handle, 14, stanzaID) } else { sqlite3_bind_null(handle, 14) }
            bindText(handle, 15, entry.receiptID)
            sqlite3_bind_int64(handle, 16, entry.keepsEvents ? 1 : 0)
        }
    }

    static func bindBlob(_ handle: SQLiteStatement, _ index: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { bytes in
            _ = sqlite3_bind_blob(
                handle, index, bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1), Int32(bytes.count),
                Self.transient)
        }
    }

    /// The stanzas that several entries of one batch share, each stored once in
    /// `queue_stanzas` when its first entry is inserted. A fanout page's app instances of one
    /// app get the same bytes (web push ones are sealed for each and stay in their rows).
    struct SharedStanzas {
        /// What finds a stanza's equals without hashing all of it: its length and last bytes
        /// (where a sealed payload's random bytes are).
        struct Key: Hashable {
            var count: Int
            var tail: UInt64
            init(_ stanza: [UInt8]) {
                count = stanza.count
                tail = stanza.suffix(8).reduce(0) { $0 << 8 | UInt64($1) }
            }
        }
        struct Group {
            var stanza: [UInt8]
            var entries = 0
            var id: Int64?
        }
        var groups: [Key: [Group]] = [:]

        init(_ queue: [QueuedMessage]) {
            for stanza in queue.lazy.map(\.stanza) {
                let key = Key(stanza)
                if let index = groups[key]?.firstIndex(where: { $0.stanza == stanza }) {
                    groups[key]![index].entries += 1
                } else {
                    groups[key, default: []].append(Group(stanza: stanza, entries: 1))
                }
            }
        }

        /// The shared row of `stanza`, stored now if it is not yet; nil when no other entry
        /// of the batch has the same stanza (or it is not one of the batch's).
        mutating func id(of stanza: [UInt8], _ db: Database) throws -> Int64? {
            let key = Key(stanza)
            guard let index = groups[key]?.firstIndex(where: { $0.stanza == stanza }),
                groups[key]![index].entries > 1
            else { return nil }
            if let id = groups[key]![index].id { return id }
            let id = try db.cachedStatement(sql: "INSERT INTO queue_stanzas (stanza) VALUES (?)").insert {
                bindBlob($0, 1, stanza)
            }
            groups[key]![index].id = id
            return id
        }
    }

    /// SQLite copies the bound value.
    static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    static func bindText(_ handle: SQLiteStatement, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { characters in
                // An empty string still needs a pointer; SQLite reads no byte of it.
                if let start = characters.baseAddress {
                    _ = sqlite3_bind_text(handle, index, start, Int32(characters.count), Self.transient)
                } else {
                    _ = sqlite3_bind_text(handle, index, "", 0, Self.transient)
                }
            }
        }
    }

    /// Deletes the queue rows `condition` selects; answers how many went and the counter
    /// keys of those that were messages (a "messages deleted" signal counts nothing). What
    /// the counters need comes back with the delete, so no stanza is read.
}
