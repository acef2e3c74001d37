import Foundation
import HeraldCore
import HeraldHTTP
import HeraldServer
import HeraldStorage
import HeraldTestSupport
import Logging
import Testing

/// Node ids that cannot collide by accident.
@Suite struct NodeIdentityTests {
    @Test func aDerivedIdIsKeptInTheDataDirectoryAndDiffersBetweenDirectories() throws {
        let first = temporaryDirectory()
        let second = temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(atPath: first)
            try? FileManager.default.removeItem(atPath: second)
        }
        let id = try NodeIdentity.stable(dataDirectory: first)
        #expect(try NodeIdentity.stable(dataDirectory: first) == id)
        #expect(try NodeIdentity.stable(dataDirectory: second) != id)
    }
}
