import Foundation
import HTTPSupport
import Hummingbird
import HummingbirdTesting
import NIOCore
import Storage
import TestSupport
import XCTest

/// The listeners run each request's handler on the event loop that owns its connection, also
/// after the handler awaited something, and a PostgreSQL handle taken there uses that loop's pool
/// (docs/benchmarks.md: no thread hop per request or per statement).
final class EventLoopBoundTests: XCTestCase {
    /// Remembers the connection's event loop for the handler.
    struct LoopContext: RequestContext {
        var coreContext: CoreRequestContextStorage
        let connectionLoop: any EventLoop

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            connectionLoop = source.channel.eventLoop
        }
    }

    func testHandlersAndTheirDatabaseHandlesRunOnTheConnectionsEventLoop() async throws {
        try await TestDatabases.forEach { location in
            let database = try PortalDatabase(location: location, logger: TestDatabases.testLogger)
            do {
                let router = Router(context: LoopContext.self)
                router.get("/where") { _, context -> String in
                    let before = context.connectionLoop.inEventLoop
                    // A statement: the handler is resumed after it, on the same loop.
                    let reachable = await database.isReachable(logger: context.logger)
                    let after = context.connectionLoop.inEventLoop
                    let handle = sql(database.database(logger: context.logger))
                    let sameLoop = handle.eventLoop === context.connectionLoop
                    return "\(before) \(reachable) \(after) \(sameLoop)"
                }
                try await Application(router: router, server: .http1OnEventLoop(),
                                      configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                    .test(.live) { client in
                        for _ in 0..<4 {
                            let body = try await client.execute(uri: "/where", method: .get) { String(buffer: $0.body) }
                            // SQLite keeps its one connection on a loop of its own.
                            XCTAssertEqual(body, location.isSQLite ? "true true true false" : "true true true true")
                        }
                    }
            } catch {
                await database.shutdown()
                throw error
            }
            await database.shutdown()
        }
    }
}
