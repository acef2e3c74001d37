import Foundation
import Testing

/// ARCHITECTURE.md: library code starts no unstructured task. Work an event loop hands over
/// goes to a `WorkQueue` its service runs, a value computed ahead or made once for many
/// callers is a `PendingResult`, and long-running work is a `Service`. The command line
/// (`Sources/herald`) is not a library and may.
@Suite struct LibraryTaskRuleTests {
    @Test func noLibraryTargetStartsAnUnstructuredTask() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let started = try Regex(#"(^|[^A-Za-z_.])Task(\.detached)?\s*(\([^)]*\))?\s*\{"#)
        var found: [String] = []
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let target = file.pathComponents[sources.pathComponents.count]
            guard target != "herald" else { continue }
            for (number, line) in try String(contentsOf: file, encoding: .utf8).split(
                separator: "\n", omittingEmptySubsequences: false
            ).enumerated() where !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                if line.contains(started) { found.append("\(target)/\(file.lastPathComponent):\(number + 1)") }
            }
        }
        #expect(found.isEmpty, "unstructured tasks: \(found)")
    }
}
