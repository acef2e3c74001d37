import HTTPTypes
import HeraldCore
import Hummingbird
import NIOCore
import Testing

@testable import HeraldHTTP

/// A request body is refused with 413 only when it is over Herald's limit; a read that fails
/// otherwise, as when the client leaves or the task is cancelled, ends with its own error.
@Suite struct RequestBodyTests {
    func request(_ body: AsyncThrowingStream<ByteBuffer, any Error>) -> Request {
        Request(
            head: HTTPRequest(method: .post, scheme: "http", authority: "herald", path: "/v1/projects/p/messages:send"),
            body: RequestBody(asyncSequence: body))
    }

    @Test func aBodyOverTheLimitIs413() async throws {
        let body = AsyncThrowingStream<ByteBuffer, any Error> { body in
            body.yield(ByteBuffer(repeating: 0x20, count: HeraldRouter.maximumBodyBytes))
            body.yield(ByteBuffer(repeating: 0x20, count: 1))
            body.finish()
        }
        let error = await #expect(throws: HeraldError.self) { try await request(body).collectBody() }
        #expect(error?.canonicalStatus.httpStatus == 413)
    }

    @Test func aBodyWhoseReadIsCancelledEndsAsCancelledNot413() async throws {
        let body = AsyncThrowingStream<ByteBuffer, any Error> { body in
            body.yield(ByteBuffer(string: #"{"message":"#))
            body.finish(throwing: CancellationError())
        }
        await #expect(throws: CancellationError.self) { try await request(body).collectBody() }
    }

    @Test func aBodyWithinTheLimitIsReadWhole() async throws {
        let body = AsyncThrowingStream<ByteBuffer, any Error> { body in
            body.yield(ByteBuffer(string: #"{"message":"#))
            body.yield(ByteBuffer(string: #"{}}"#))
            body.finish()
        }
        #expect(String(buffer: try await request(body).collectBody()) == #"{"message":{}}"#)
    }
}
