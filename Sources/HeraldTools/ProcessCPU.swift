import Foundation

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

    /// Waits until the process is quiet: under 10% of a core over a quarter of a second, for
    /// at most `limit`; without a process id to watch, waits two seconds. A benchmark calls
    /// this before its measured step, so that work left over from setting up (the logins
    /// of thousands of connections just opened) is not measured with it.
    public static func waitUntilIdle(pid: Int32?, limit: Duration = .seconds(30)) async throws {
        guard let pid, var previous = seconds(pid: pid) else {
            try await Task.sleep(for: .seconds(2))
            return
        }
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(250))
            guard let now = seconds(pid: pid) else { return }
            if now - previous < 0.025 { return }
            previous = now
        }
    }
}
