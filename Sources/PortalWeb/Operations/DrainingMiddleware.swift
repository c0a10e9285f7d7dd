import Hummingbird

/// While the instance drains (from SIGTERM until its listener closes, see ``ShutdownDrain``),
/// every response says `Connection: close`, so a proxy that pools connections to the instances
/// (nginx's `keepalive`) takes none of them back. Without it the listener's close at the end of
/// the drain races with a request the proxy has just sent on a pooled connection, and nginx
/// never resends a POST that may have reached an instance: the officer would get a 502 in the
/// middle of a rolling restart.
struct DrainingMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    let readiness: Readiness

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            response = try await next(request, context)
        } catch let error as any HTTPResponseError where readiness.isDraining {
            response = try error.response(from: request, context: context)
        }
        if readiness.isDraining {
            response.headers[.connection] = "close"
        }
        return response
    }
}
