import Foundation

/// A directory only its owner may read: the data directory holds the access-token signing
/// secret, every API, server and gateway key, and every message. The directory and the
/// folders in it are 0700 and every file 0600, whatever the process's umask; one made by an
/// earlier version is tightened when it is opened.
public enum PrivateDirectory {
    /// Creates `path` (and missing parents) if needed, then makes it and everything in it
    /// readable by the owner alone.
    public static func prepare(_ path: String) throws {
        let manager = FileManager.default
        try manager.createDirectory(
            atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try restrict(path)
    }

    /// Sets 0700 on `path` and its folders and 0600 on its files, all the way down.
    public static func restrict(_ path: String) throws {
        let manager = FileManager.default
        try manager.setAttributes([.posixPermissions: 0o700], ofItemAtPath: path)
        guard let entries = manager.enumerator(atPath: path) else { return }
        for case let entry as String in entries {
            let full = (path as NSString).appendingPathComponent(entry)
            var isDirectory: ObjCBool = false
            guard manager.fileExists(atPath: full, isDirectory: &isDirectory) else { continue }
            try manager.setAttributes([.posixPermissions: isDirectory.boolValue ? 0o700 : 0o600], ofItemAtPath: full)
        }
    }
}
