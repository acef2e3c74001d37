/// The CPU time a process uses from the moment the meter is made: what a benchmark reads
/// around its measured step.
public struct CPUMeter: Sendable {
    private let pid: Int32?
    private let start: Double?

    /// Starts measuring the process; without a process id the meter reads nothing.
    public init(pid: Int32?) {
        self.pid = pid
        start = pid.flatMap(ProcessCPU.seconds)
    }

    /// User plus system seconds used since the meter was made, or nil when there is no
    /// process to read or a reading failed.
    public func used() -> Double? {
        guard let pid, let start, let now = ProcessCPU.seconds(pid: pid) else { return nil }
        return now - start
    }
}
