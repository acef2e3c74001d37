import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The lock a server holds on its data directory (`herald.lock`) for as long as it runs on
/// the embedded store, so that a second server or a restore cannot open the same store
/// under it. The kernel releases it when the process ends, however it ends.
public final class DataDirectoryLock: Sendable {
    let descriptor: Int32

    /// Why the lock could not be taken.
    public struct Held: Error, CustomStringConvertible {
        public var dataDirectory: String
        public var description: String {
            "a herald serve is running on \(dataDirectory) (it holds herald.lock)"
        }
    }

    /// Takes the lock of `dataDirectory` (which must exist), or throws `Held` at once.
    public init(dataDirectory: String) throws {
        let path = (dataDirectory as NSString).appendingPathComponent("herald.lock")
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            throw Held(dataDirectory: dataDirectory)
        }
    }

    deinit {
        close(descriptor)
    }
}
