public import HeraldHTTP
public import HeraldStorage
public import Hummingbird
public import HummingbirdAuth

/// The context of the console's routes: the API's context (its address) with a session.
public struct ConsoleRequestContext: ChildRequestContext, SessionRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let sessions: SessionContext<ConsoleSession>
    /// The address the request came from, which sign-in failures are counted by.
    public let sourceAddress: String
    /// The session the guard found, on every page but sign-in.
    public var signedIn: ConsoleSession?
    /// The signed-in user, as the store has them now.
    public var user: ConsoleUser?
    /// A posted form's fields, once the guard has checked its CSRF token.
    public var form: [String: String] = [:]

    public init(context: HeraldRequestContext) {
        coreContext = context.coreContext
        sessions = SessionContext()
        sourceAddress = context.sourceAddress
    }
}
