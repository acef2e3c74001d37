public import Logging

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The process's limit on open files: every device connection holds one.
public enum OpenFiles {
    /// Raises the soft limit to the hard one (what an unprivileged process may) and logs
    /// the limit in force, which bounds the connections this node can hold; answers it
    /// (nil where it cannot be read).
    @discardableResult
    public static func raiseLimit(logger: Logger) -> Int? {
        #if canImport(Glibc)
            var limit = rlimit()
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
            if limit.rlim_cur < limit.rlim_max {
                var raised = limit
                raised.rlim_cur = limit.rlim_max
                if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
            }
            logger.info("open files limit \(limit.rlim_cur): at most about that many device and HTTP connections")
            return Int(clamping: limit.rlim_cur)
        #else
            return nil
        #endif
    }
}
