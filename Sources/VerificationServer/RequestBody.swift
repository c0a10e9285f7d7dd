import Hummingbird

extension Request {
    /// The JSON body as `type`. Hummingbird's `decode(as:context:)` answers a body the decoder
    /// refuses with a 400 that quotes the decoder ("Coding key `references` not found.", Swift
    /// type names); here the `DecodingError` itself reaches ``CWARequestMiddleware``, which
    /// answers with the fixed ``CWARequestMiddleware/malformedBody``.
    func decodeBody<Body: Decodable>(as type: Body.Type, context: ServerRequestContext) async throws -> Body {
        try await context.requestDecoder.decode(type, from: self, context: context)
    }
}
