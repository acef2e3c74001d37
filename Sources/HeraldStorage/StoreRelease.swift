public import HeraldCore

/// Which releases of Herald a store is for, as its `release_marks` record them: the oldest
/// release that can use it (raised by a migration that older releases cannot work beside)
/// and the newest release that has opened it.
///
/// A rolling upgrade runs two adjacent releases on one store: the newer migrates it, and
/// the older keeps working as long as it is not older than `oldestReader`.
public struct StoreRelease: Sendable, Equatable {
    public var oldestReader: SemanticVersion?
    public var newestWriter: SemanticVersion?

    public init(oldestReader: SemanticVersion?, newestWriter: SemanticVersion?) {
        self.oldestReader = oldestReader
        self.newestWriter = newestWriter
    }

    /// The oldest release that can use a store migrated by this one: every migration so
    /// far adds tables and columns the previous release does not read.
    public static let oldestReaderOfThisSchema = SemanticVersion(0, 9, 0)

    /// Why a release refuses to open a store.
    public struct TooNew: Error, CustomStringConvertible {
        public var release: StoreRelease
        public var running: SemanticVersion

        public var description: String {
            let writer = release.newestWriter.map { " (last opened by Herald \($0))" } ?? ""
            return "this store needs Herald \(release.oldestReader?.description ?? "?") or newer\(writer); "
                + "this is Herald \(running): upgrade Herald, or restore a backup taken before the upgrade"
        }
    }

    /// Throws `TooNew` when `running` is older than the oldest release the store allows.
    public func check(running: SemanticVersion = .herald) throws {
        if let oldestReader, running < oldestReader { throw TooNew(release: self, running: running) }
    }

    /// The marks after `running` has opened and migrated the store.
    public func opened(by running: SemanticVersion = .herald) -> StoreRelease {
        StoreRelease(
            oldestReader: max(oldestReader ?? Self.oldestReaderOfThisSchema, Self.oldestReaderOfThisSchema),
            newestWriter: max(newestWriter ?? running, running))
    }

    /// The marks read from `release_marks` rows (name, value).
    public init(rows: [(String, String)]) {
        let values = Dictionary(rows, uniquingKeysWith: { first, _ in first })
        self.init(
            oldestReader: values["oldest_reader"].flatMap(SemanticVersion.init),
            newestWriter: values["newest_writer"].flatMap(SemanticVersion.init))
    }

    /// The rows `release_marks` keeps.
    public var rows: [(String, String)] {
        [
            oldestReader.map { ("oldest_reader", $0.description) },
            newestWriter.map { ("newest_writer", $0.description) },
        ]
        .compactMap { $0 }
    }
}
