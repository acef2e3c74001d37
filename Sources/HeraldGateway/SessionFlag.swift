import Synchronization

/// Whether a session's device dozes, readable from any thread.
/// A flag one task sets and another reads: whether a session dozes, whether it missed a wake.
final class SessionFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool {
        get { value.load(ordering: .relaxed) }
        set { value.store(newValue, ordering: .relaxed) }
    }
}
