import HeraldCore
import Testing

/// TTLs in `google.protobuf.Duration`'s JSON form (SEMANTICS D5): whole seconds, an
/// optional fraction of 1 to 9 digits, an `s`; fractions round down.
@Suite struct ProtoDurationTests {
    @Test func durationsParseToWholeSecondsRoundedDown() {
        let parsed: [(String, Int64)] = [
            ("0s", 0), ("3600s", 3600), ("2419200s", 2_419_200), ("1.5s", 1), ("1.000000000s", 1),
            ("0.999999999s", 0), ("-2s", -2), ("-0.5s", -1), ("-3.0s", -3), ("999999999999s", 999_999_999_999),
        ]
        for (text, seconds) in parsed {
            #expect(ProtoDuration.parseSeconds(text) == seconds, "\(text)")
        }
    }

    @Test func whatIsNotADurationIsRefused() {
        let refused = [
            "", "s", "-s", "1", "10m", ".5s", "1.s", "1.1234567890s", "1234567890123s", "+1s", "--1s", "1e3s",
            " 1s", "1 s", "1.5.5s", "\u{0661}s", "１s", "1ss", "0x10s",
        ]
        for text in refused {
            #expect(ProtoDuration.parseSeconds(text) == nil, "\(text)")
        }
    }
}
