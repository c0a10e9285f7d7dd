import FluentKit
import Foundation
import Logging
import Storage
import SQLKit

/// The databases every storage-touching suite runs against: a fresh SQLite file always, and the
/// PostgreSQL server named by `PORTAL_TEST_POSTGRES_URL` when set. CI sets it together with
/// `PORTAL_TEST_REQUIRE_POSTGRES=1`, so a missing server fails the run instead of skipping.
package enum TestDatabases {
    package struct MissingPostgres: Error, CustomStringConvertible {
        package var description: String { "PORTAL_TEST_REQUIRE_POSTGRES=1 but PORTAL_TEST_POSTGRES_URL is not set" }
    }

    package static func all() throws -> [DatabaseLocation] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("portal-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var locations: [DatabaseLocation] = [.sqlite(path: directory.appendingPathComponent("test.sqlite").path)]
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["PORTAL_TEST_POSTGRES_URL"], !url.isEmpty {
            locations.append(.postgres(url: url))
        } else if environment["PORTAL_TEST_REQUIRE_POSTGRES"] == "1" {
            throw MissingPostgres()
        }
        return locations
    }

    /// Empties a PostgreSQL test database (SQLite files are new for every test anyway).
    package static func reset(_ location: DatabaseLocation, logger: Logger) async throws {
        guard case .postgres = location else { return }
        let database = try PortalDatabase(location: location, logger: logger)
        do {
            let sql = database.database(logger: logger) as! any SQLDatabase
            try await sql.raw("DROP SCHEMA public CASCADE").run()
            try await sql.raw("CREATE SCHEMA public").run()
        } catch {
            await database.shutdown()
            throw error
        }
        await database.shutdown()
    }

    /// Runs `body` once per database, naming the database in any failure.
    package static func forEach(_ body: (DatabaseLocation) async throws -> Void) async throws {
        for location in try all() {
            try await reset(location, logger: testLogger)
            do {
                try await body(location)
            } catch {
                throw Failure(location: location, underlying: error)
            }
        }
    }

    /// Runs `body` once per database, migrated with `migrations`, and shuts the database down.
    package static func forEachMigrated(_ migrations: [any Migration], _ body: (any Database) async throws -> Void) async throws {
        try await forEach { location in
            let database = try PortalDatabase(location: location, logger: testLogger)
            do {
                try await database.migrate(migrations, logger: testLogger)
                try await body(database.database(logger: testLogger))
            } catch {
                await database.shutdown()
                throw error
            }
            await database.shutdown()
        }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let location: DatabaseLocation
        package let underlying: any Error
        package var description: String { "[\(location)] \(underlying)" }
    }

    package static var testLogger: Logger {
        var logger = Logger(label: "tests")
        logger.logLevel = .warning
        return logger
    }
}

/// A clock tests move by hand (session timeouts, rate windows, lockouts).
package final class TestClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    package init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = start
    }

    package var now: Date { lock.withLock { current } }

    package func advance(seconds: TimeInterval) {
        lock.withLock { current = current.addingTimeInterval(seconds) }
    }

    package var function: @Sendable () -> Date { { [self] in now } }
}

/// The repository root, for Templates/ and Public/.
package let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
