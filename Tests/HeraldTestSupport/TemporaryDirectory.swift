import Foundation
import HeraldCore

/// A new path under TMPDIR for a test's data directory, not yet created (`scripts/test`
/// removes TMPDIR after the run).
public func temporaryDirectory() -> String {
    NSTemporaryDirectory() + "herald-test-" + SecureRandom.hex(bytes: 8)
}

/// `temporaryDirectory()`, created.
public func createdTemporaryDirectory() -> String {
    let path = temporaryDirectory()
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}
