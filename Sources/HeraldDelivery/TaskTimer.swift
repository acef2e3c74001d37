/// A timer run by a task of its own, for waits no connection's thread times.
final class TaskTimer: DeliveryPath.Timer {
    private let task: Task<Void, Never>

    init(after delay: Duration, _ body: @escaping @Sendable () -> Void) {
        task = Task {
            try? await Task.sleep(for: delay)
            if !Task.isCancelled { body() }
        }
    }

    func cancel() { task.cancel() }
}
