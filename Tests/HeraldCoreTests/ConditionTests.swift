import HeraldCore
import Testing

@Suite struct ConditionTests {
    @Test func andBindsTighterThanOrAndNotTighterThanAnd() throws {
        let condition = try Condition.parse("'a' in topics || 'b' in topics && !'c' in topics")
        #expect(condition == .or(.topic("a"), .and(.topic("b"), .not(.topic("c")))))
    }

    @Test func parenthesesGroup() throws {
        let condition = try Condition.parse("('a' in topics || 'b' in topics) && 'c' in topics")
        #expect(condition == .and(.or(.topic("a"), .topic("b")), .topic("c")))
        #expect(condition.topicTerms == ["a", "b", "c"])
    }

    @Test func doubleQuotesAndExtraSpacesAreAccepted() throws {
        #expect(try Condition.parse(#"  "a"   in   topics  "#) == .topic("a"))
    }

    @Test func evaluatesAgainstSubscriptions() throws {
        let condition = try Condition.parse("'a' in topics && !('b' in topics || 'c' in topics)")
        #expect(condition.matches { $0 == "a" })
        #expect(!condition.matches { $0 == "a" || $0 == "c" })
        #expect(!condition.matches { _ in false })
    }

    @Test func errorsNameThePosition() {
        do {
            _ = try Condition.parse("'a' in topics && 'b' in topix")
            Issue.record("expected a failure")
        } catch {
            #expect(error.position == 24)
            #expect(error.description.contains("position 24"))
        }
    }

    @Test func deepNestingIsRefused() {
        let deep = String(repeating: "(", count: 100) + "'a' in topics" + String(repeating: ")", count: 100)
        #expect(throws: Condition.ParseError.self) { try Condition.parse(deep) }
    }
}
