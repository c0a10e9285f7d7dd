import FluentKit
import Logging
import NIOConcurrencyHelpers
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
///
/// With a cluster's URL (several hosts, or `target_session_attrs`), every statement runs on a
/// connection that ``PrimaryFinder`` has found to lead to the primary.
struct ConnectionCheckingDatabase: Database, SQLDatabase {
    /// The driver's handle: the pool's, or (inside ``withConnection(_:)``) one connection's.
    let inner: any Database
    /// The connection the handle is bound to, inside a transaction.
    let connection: PostgresConnection?
    /// Each host's pool, in the URL's order (only `inner` when the handle is bound).
    private let hosts: [any Database]
    /// Nil for a single host with `target_session_attrs=any`: the pool's connections are used as they come.
    private let finder: PrimaryFinder?

    init(_ inner: any Database, connection: PostgresConnection? = nil, finder: PrimaryFinder? = nil) {
        self.inner = inner
        self.connection = connection
        self.hosts = [inner]
        self.finder = finder
    }

    /// A handle on a cluster: `hosts[i]` is the pool of the URL's i-th host.
    init(hosts: [any Database], finder: PrimaryFinder) {
        self.inner = hosts[finder.order[0]]
        self.connection = nil
        self.hosts = hosts
        self.finder = finder
    }

    /// Whether statements must go through ``withConnection(_:)`` to reach the primary.
    private var findsPrimary: Bool { finder != nil && connection == nil }

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
        if findsPrimary { return withConnection { $0.execute(query: query, onOutput: onOutput) } }
        return checked { inner.execute(query: query, onOutput: onOutput) }
    }

    func execute(schema: DatabaseSchema) -> EventLoopFuture<Void> {
        if findsPrimary { return withConnection { $0.execute(schema: schema) } }
        return checked { inner.execute(schema: schema) }
    }

    func execute(enum: DatabaseEnum) -> EventLoopFuture<Void> {
        if findsPrimary { return withConnection { $0.execute(enum: `enum`) } }
        return checked { inner.execute(enum: `enum`) }
    }

    func withConnection<T>(_ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        if connection != nil { return closure(self) }
        guard let finder else { return Self.connect(inner, finder: nil, onReady: {}, closure) }
        return tryHosts(finder.order[...], finder: finder, lastError: nil, closure)
    }

    /// libpq's way through a host list: the next host when one cannot be reached or is not the
    /// primary, but never once `closure` has started (a statement may have reached the server).
    private func tryHosts<T>(_ order: ArraySlice<Int>, finder: PrimaryFinder, lastError: (any Error)?,
                             _ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        guard let host = order.first else { return eventLoop.makeFailedFuture(lastError ?? PrimaryFinder.NotTheTarget()) }
        let started = NIOLockedValueBox(false)
        let ready: @Sendable () -> Void = {
            started.withLockedValue { $0 = true }
            finder.succeeded(host: host)
        }
        return Self.connect(hosts[host], finder: finder, onReady: ready, closure).flatMapError { error in
            // A host that gave no connection in time counts as unreachable here: a machine that
            // vanished does not refuse, it does not answer (the connect timeout, or the pool's
            // wait when that ends first).
            let movesOn = !started.withLockedValue { $0 }
                && (error is PrimaryFinder.NotTheTarget || error is ConnectionPoolTimeoutError
                    || PortalDatabase.unavailability(of: error) == .unreachable)
            guard movesOn else { return self.eventLoop.makeFailedFuture(error) }
            return self.tryHosts(order.dropFirst(), finder: finder, lastError: error, closure)
        }
    }

    /// Runs `closure` on one of `pool`'s connections, checked by `finder` first when there is one.
    private static func connect<T>(_ pool: any Database, finder: PrimaryFinder?, onReady: @escaping @Sendable () -> Void,
                                   _ closure: @escaping @Sendable (any Database) -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        pool.withConnection { bound in
            guard let postgres = bound as? any PostgresDatabase else { return closure(ConnectionCheckingDatabase(bound)) }
            return postgres.withConnection { connection in
                let database = ConnectionCheckingDatabase(bound, connection: connection, finder: finder)
                guard let finder else { return closure(database) }
                return finder.check(connection).flatMap {
                    onReady()
                    return closure(database).flatMapErrorThrowing { error in
                        if PortalDatabase.unavailability(of: error) == .readOnly { finder.refusedToWrite(connection) }
                        throw error
                    }
                }
            }
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
        if findsPrimary { return withConnection { ($0 as! any SQLDatabase).execute(sql: query, onRow) } }
        return checked { innerSQL.execute(sql: query, onRow) }
    }

    /// On a cluster: a session on the host just found to be the primary (the migration lock's
    /// session; the migrations' statements themselves go through ``withConnection(_:)``).
    func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        guard findsPrimary, let finder else { return try await innerSQL.withSession(closure) }
        try await withConnection { $0.eventLoop.makeSucceededVoidFuture() }.get()
        return try await (hosts[finder.order[0]] as! any SQLDatabase).withSession(closure)
    }
}
