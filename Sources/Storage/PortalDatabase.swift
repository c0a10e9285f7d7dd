import Foundation
import AsyncKit
import FluentKit
import FluentPostgresDriver
import FluentSQLiteDriver
import Logging
import NIOCore
import NIOPosix
import SQLKit

/// Owns the connection pools for one database and hands out `Database` values.
///
/// SQLite gets a single connection on a single event loop: every statement and transaction is
/// serialised, which is what a single-file database wants (no "database is locked" under load).
/// PostgreSQL gets a pool per event loop, and per host when the URL names a cluster's hosts.
package final class PortalDatabase: Sendable {
    package let location: DatabaseLocation
    private let databases: Databases
    /// The Fluent database per host of a PostgreSQL URL, in its order.
    private let hostIDs: [DatabaseID]
    /// Set for a cluster's URL (``PrimaryFinder``).
    private let finder: PrimaryFinder?
    private let threadPool: NIOThreadPool
    private let eventLoopGroup: MultiThreadedEventLoopGroup

    package init(location: DatabaseLocation, poolSize: Int = 8, logger: Logger) throws {
        self.location = location
        let loops = location.isSQLite ? 1 : 2
        self.eventLoopGroup = MultiThreadedEventLoopGroup(numberOfThreads: loops)
        self.threadPool = NIOThreadPool(numberOfThreads: 2)
        threadPool.start()
        self.databases = Databases(threadPool: threadPool, on: eventLoopGroup)
        switch location {
        case .sqlite(let path):
            // Owner-only, like the secret file: it holds usernames, addresses and the audit
            // trail. SQLite gives its -wal and -shm files the same mode. (An existing file keeps
            // the mode the operator gave it; if this fails, SQLite reports the problem itself.)
            if !FileManager.default.fileExists(atPath: path) {
                FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600])
            }
            databases.use(.sqlite(.file(path), sqlLogLevel: .trace), as: .sqlite)
            hostIDs = [.sqlite]
            finder = nil
        case .postgres(let url):
            let parsed: PostgresURL
            let configurations: [SQLPostgresConfiguration]
            do {
                // Its errors name the setting at fault, never the password.
                parsed = try PostgresURL(url)
                configurations = try parsed.configurations()
            } catch {
                try? threadPool.syncShutdownGracefully()
                try? eventLoopGroup.syncShutdownGracefully()
                throw error
            }
            hostIDs = configurations.indices.map { $0 == 0 ? .psql : DatabaseID(string: "psql-\($0)") }
            for (id, configuration) in zip(hostIDs, configurations) {
                databases.use(.postgres(configuration: configuration, maxConnectionsPerEventLoop: max(1, poolSize / loops), sqlLogLevel: .trace), as: id)
            }
            let isCluster = parsed.hosts.count > 1 || parsed.targetSessionAttributes != .any
            finder = isCluster ? PrimaryFinder(hostCount: parsed.hosts.count, target: parsed.targetSessionAttributes) : nil
        }
    }

    /// Opens the database and applies `migrations` (see ``migrate(_:logger:)``). On failure the
    /// pools are closed again, so a caller that gets an error has nothing to shut down.
    package static func openMigrated(location: DatabaseLocation, poolSize: Int = 8, migrations: [any Migration],
                                    logger: Logger) async throws -> PortalDatabase {
        let database = try PortalDatabase(location: location, poolSize: poolSize, logger: logger)
        do {
            try await database.migrate(migrations, logger: logger)
        } catch {
            await database.shutdown()
            throw error
        }
        return database
    }

    /// A database handle; cheap, make one per request or job.
    package func database(logger: Logger) -> any Database {
        let loop = eventLoopGroup.any()
        if let finder {
            return ConnectionCheckingDatabase(hosts: hostIDs.map { databases.database($0, logger: logger, on: loop)! }, finder: finder)
        }
        let database = databases.database(hostIDs[0], logger: logger, on: loop)!
        return location.isSQLite ? database : ConnectionCheckingDatabase(database)
    }

    /// Creates missing tables and indexes. Safe to run on every start and from several instances:
    /// on PostgreSQL an advisory lock makes concurrent starts wait for each other.
    package func migrate(_ migrations: [any Migration], logger: Logger) async throws {
        let all = Migrations()
        all.add(migrations)
        // Through ``database(logger:)``: on a cluster, only the primary is migrated.
        let migrator = Migrator(databaseFactory: { _ in self.database(logger: logger) }, migrations: all,
                                on: eventLoopGroup.any(), migrationLogLevel: .debug)
        if !location.isSQLite {
            // The audit chain's hash is computed by PostgreSQL over UTF-8 text (AuditLog), and
            // everything else assumes UTF-8 too.
            struct Row: Decodable { let server_encoding: String }
            let sql = database(logger: logger) as! any SQLDatabase
            let encoding = try await sql.raw("SHOW server_encoding").first(decoding: Row.self)?.server_encoding ?? "?"
            guard encoding.uppercased() == "UTF8" else {
                throw DatabaseLocation.ParseError(description: "the PostgreSQL database must use the UTF8 encoding (it uses \(encoding)); create it with `createdb -E UTF8`")
            }
        }
        try await withMigrationLock(logger: logger) {
            try await migrator.setupIfNeeded().get()
            try await migrator.prepareBatch().get()
        }
        if location.isSQLite {
            // WAL lets the health check read while a write is in progress.
            let sql = database(logger: logger) as! any SQLDatabase
            try await sql.raw("PRAGMA journal_mode=WAL").run()
        }
    }

    /// True when a trivial query succeeds; for `/health/ready`.
    package func isReachable(logger: Logger) async -> Bool {
        do {
            let sql = database(logger: logger) as! any SQLDatabase
            try await sql.raw("SELECT 1").run()
            return true
        } catch {
            return false
        }
    }

    package func shutdown() async {
        await databases.shutdownAsync()
        try? await threadPool.shutdownGracefully()
        try? await eventLoopGroup.shutdownGracefully()
    }

    private func withMigrationLock(logger: Logger, _ body: @escaping @Sendable () async throws -> Void) async throws {
        guard !location.isSQLite else { return try await body() }
        let sql = database(logger: logger) as! any SQLDatabase
        // Session-level advisory lock; the key is an arbitrary constant for "teletan migrations".
        try await sql.withSession { session in
            try await session.raw("SELECT pg_advisory_lock(727272)").run()
            do {
                try await body()
            } catch {
                try? await session.raw("SELECT pg_advisory_unlock(727272)").run()
                throw error
            }
            try await session.raw("SELECT pg_advisory_unlock(727272)").run()
        }
    }
}

extension DatabaseLocation {
    package var isSQLite: Bool {
        if case .sqlite = self { return true }
        return false
    }
}
