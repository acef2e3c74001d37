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

/// Reads a process's CPU time from `/proc`.
public enum ProcessCPU {
    /// User plus system CPU seconds the process has used, or nil when it cannot be read.
    public static func seconds(pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        // Fields after the command name: state is field 3, utime 14 and stime 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}
