import HeraldCore
import Testing

/// Random values for ids and tokens (C2): as many bytes as asked for, and not repeated.
@Suite struct SecureRandomTests {
    @Test func eachCountOfBytesIsWhatWasAskedForAndDrawsAreNotRepeated() {
        for count in [0, 1, 7, 8, 9, 16, 33] {
            #expect(SecureRandom.bytes(count).count == count)
        }
        let draws = (0..<1000).map { _ in SecureRandom.bytes(9) }
        #expect(Set(draws.map { $0.map(String.init).joined(separator: ",") }).count == 1000)
        // Every byte value turns up in 64 KiB of draws; a byte stuck at one value would not.
        #expect(Set(SecureRandom.bytes(65536)).count == 256)
    }

    @Test func hexIsTwoLowerCaseDigitsAByte() {
        let text = SecureRandom.hex(bytes: 8)
        #expect(text.count == 16)
        #expect(text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) })
        let ids = Set((0..<1000).map { _ in SecureRandom.hex(bytes: 8) })
        #expect(ids.count == 1000)
    }
}
