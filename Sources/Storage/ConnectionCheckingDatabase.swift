import FluentKit
import Logging
import NIOCore
import PostgresKit
import SQLKit

/// A PostgreSQL database handle whose transactions never wait for ever on a connection the server
/// has closed.
///
/// postgres-nio (1.33) writes each statement to its channel without a promise for the write. When
/// the server has just closed the connection (PostgreSQL stopping or restarting: FATAL 57P01), the
/// write fails unseen and the statement's own promise is never completed: the request waits for
/// ever and its pool slot is never given back. The driver's transaction hits exactly that: a
/// statement fails because the connection closed, and then it sends `ROLLBACK` on the closed
/// connection. The fault test of a PostgreSQL restart saw 1 to 4 such requests per restart.
///
/// So inside a transaction every statement first checks that the connection is still open, and
/// a transaction whose connection closed ends with the error, without `ROLLBACK` (the server rolled
/// it back when the connection ended). Outside transactions the pool already hands out only open
/// connections.
struct ConnectionCheckingDatabase: Database, SQLDatabase {
    /// The driver's handle: the pool's, or (inside ``withConnection(_:)``) one connection's.
    let inner: any Database
    /// The connection the handle is bound to, inside a transaction.
    let connection: PostgresConnection?

    init(_ inner: any Database, connection: PostgresConnection? = nil) {
        self.inner = inner
        self.connection = connection
    }

    /// The connection closed under a transaction; what was not committed is gone.
    struct ConnectionLost: Error {}

    private var innerSQL: any SQLDatabase { inner as! any SQLDatabase }

    private var isConnectionClosed: Bool { connection?.isClosed ?? false }

    /// Checks on the connection's own event loop, right before the statement is written there:
    /// NIO marks the channel inactive on that loop before it removes the handlers, so nothing can
    /// close it between the check and the write.
    private func checked<T>(_ run: @escaping () -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard let connection else { return run() }
        return connection.eventLoop.flatSubmit {
            connection.isClosed ? connection.eventLoop.makeFailedFuture(ConnectionLost()) : run()
        }
    }

    // MARK: Database

    var context: DatabaseContext { inner.context }
    var inTransaction: Bool { inner.inTransaction }

    func execute(query: DatabaseQuery, onOutput: @escaping @Sendable (any DatabaseOutput) -> ()) -> EventLoopFuture<Void> {
        checked { inner.execute(query: query, onOutput: onOutput) }
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        checked { inner.execute(schema: schema) }
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        checked { inner.execute(enum: `enum`) }
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        if connection != nil { return closure(self) }
        return inner.withConnection { bound in
            guard let postgres = bound as? any PostgresDatabase else { return closure(ConnectionCheckingDatabase(bound)) }
            return postgres.withConnection { connection in closure(ConnectionCheckingDatabase(bound, connection: connection)) }
        }
    }

    func transaction<T: Sendable>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        // A handle bound to a connection is in a transaction already (the driver's convention).
        guard !inTransaction else { return closure(self) }
        return withConnection { database in
            let bound = database as! ConnectionCheckingDatabase
            return bound.raw("BEGIN").run().flatMap {
                closure(bound).flatMap { result in
                    bound.raw("COMMIT").run().map { result }
                }.flatMapError { error in
                    guard !bound.isConnectionClosed else { return bound.eventLoop.makeFailedFuture(error) }
                    return bound.raw("ROLLBACK").run().flatMapThrowing { throw error }
                }
            }
        }
    }

    // MARK: SQLDatabase

    var logger: Logger { innerSQL.logger }
    var eventLoop: any EventLoop { innerSQL.eventLoop }
    var version: (any SQLDatabaseReportedVersion)? { innerSQL.version }
    var dialect: any SQLDialect { innerSQL.dialect }
    var queryLogLevel: Logger.Level? { innerSQL.queryLogLevel }

    func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> ()) -> EventLoopFuture<Void> {
        checked { innerSQL.execute(sql: query, onRow) }
    }

    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await innerSQL.withSession(closure)
    }
}
