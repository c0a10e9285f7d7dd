import FluentKit
import Foundation
import Logging
import SQLKit

/// One migration of the release, and when it was applied to the database (nil: pending).
package struct MigrationState: Sendable, Equatable {
    package let name: String
    package let appliedAt: Date?

    package var isPending: Bool { appliedAt == nil }

    package init(name: String, appliedAt: Date?) {
        self.name = name
        self.appliedAt = appliedAt
    }
}

extension PortalDatabase {
    /// Every migration of `migrations`, in the order they run, with the time it was applied.
    /// Reads Fluent's own table; a database never migrated has every migration pending.
    /// Throws when the database cannot be reached.
    package func migrationStatus(_ migrations: [any Migration], logger: Logger) async throws -> [MigrationState] {
        let sql = database(logger: logger) as! any SQLDatabase
        try await sql.raw("SELECT 1").run()
        let applied = try await appliedMigrations(sql)
        return migrations.map { MigrationState(name: $0.name, appliedAt: applied[$0.name]) }
    }

    private func appliedMigrations(_ sql: any SQLDatabase) async throws -> [String: Date] {
        let tableExists: Bool
        if location.isSQLite {
            struct Row: Decodable { let name: String }
            tableExists = try await sql.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name = '_fluent_migrations'")
                .first(decoding: Row.self) != nil
        } else {
            struct Row: Decodable { let present: Bool }
            tableExists = try await sql.raw("SELECT to_regclass('_fluent_migrations') IS NOT NULL AS present")
                .first(decoding: Row.self)?.present ?? false
        }
        guard tableExists else { return [:] }
        struct Applied: Decodable {
            let name: String
            let created_at: Date?
        }
        let rows = try await sql.raw("SELECT name, created_at FROM _fluent_migrations").all(decoding: Applied.self)
        return Dictionary(rows.map { ($0.name, $0.created_at ?? Date(timeIntervalSince1970: 0)) }, uniquingKeysWith: { first, _ in first })
    }
}
