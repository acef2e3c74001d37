import Foundation

/// Reads a process's resident memory from `/proc`.
public enum ProcessMemory {
    /// The resident set size of a process in kB, or nil when it cannot be read.
    public static func residentKilobytes(pid: Int32) -> Int? { field("VmRSS:", pid: pid) }

    /// The peak resident set size of a process in kB.
    public static func peakResidentKilobytes(pid: Int32) -> Int? { field("VmHWM:", pid: pid) }

    private static func field(_ name: String, pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix(name) {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
        }
        return nil
    }
}
