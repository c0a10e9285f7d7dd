import Hummingbird
import Logging

/// One log line and one metric per request: method, path (never the query string), status,
/// duration and request id. Paths carry no secrets; form bodies are never logged.
struct RequestLogMiddleware: RouterMiddleware {
    typealias Context = PortalRequestContext
    let metrics: PortalMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        metrics.request(method: request.method.rawValue, status: response.status.code, duration: elapsed)
        context.logger.info("request", metadata: [
            "method": "\(request.method.rawValue)",
            "path": "\(request.uri.path)",
            "status": "\(response.status.code)",
            "ms": "\(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)",
            "client": "\(context.clientAddress ?? "-")",
        ])
        return response
    }
}
