import HeraldConsole
import HeraldCore
import Testing

/// Console sign-ins run one at a time per name and per address, and slow after failures.
@Suite struct SignInThrottleTests {
    @Test func aSecondAttemptForTheSameNameOrFromTheSameAddressIsRefusedWhileOneIsChecked() {
        let throttle = SignInThrottle()
        let now = Timestamp(seconds: 100)
        #expect(throttle.begin(name: "ops", address: "10.0.0.1", now: now) == 0)
        #expect(throttle.begin(name: "OPS", address: "10.0.0.2", now: now) == nil)
        #expect(throttle.begin(name: "other", address: "10.0.0.1", now: now) == nil)
        #expect(throttle.begin(name: "other", address: "10.0.0.3", now: now) == 0)
        throttle.failed(name: "ops", address: "10.0.0.1", now: now)
        // The next attempt for the name waits a second longer for each failure.
        #expect(throttle.begin(name: "ops", address: "10.0.0.4", now: now) == 1)
        throttle.succeeded(name: "ops", address: "10.0.0.4")
        #expect(throttle.begin(name: "ops", address: "10.0.0.4", now: now) == 0)
    }
}
