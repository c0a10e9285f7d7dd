import FluentKit
import SQLKit

/// Migration 001 of this module: the tables of the rate limiter and the lockouts. Plain SQL that
/// SQLite and PostgreSQL both accept, because the composite keys and upserts are the point here.
package struct CreateRateLimitTables: AsyncMigration {
    package init() {}

    /// What databases record it under: fixed forever, whatever the type or module is called.
    package var name: String { "Storage.CreateRateLimitTables" }

    package func prepare(on database: any Database) async throws {
        try await sql(database).raw("""
            CREATE TABLE rate_slots (
                rule TEXT NOT NULL, bucket TEXT NOT NULL, slot BIGINT NOT NULL,
                hits INTEGER NOT NULL, expires_ms BIGINT NOT NULL,
                PRIMARY KEY (rule, bucket, slot))
            """).run()
        try await sql(database).raw("CREATE INDEX rate_slots_expiry ON rate_slots (expires_ms)").run()
        try await sql(database).raw("""
            CREATE TABLE lockouts (
                scope TEXT NOT NULL, lock_key TEXT NOT NULL, until_ms BIGINT NOT NULL,
                PRIMARY KEY (scope, lock_key))
            """).run()
    }

    package func revert(on database: any Database) async throws {
        try await sql(database).raw("DROP TABLE IF EXISTS rate_slots").run()
        try await sql(database).raw("DROP TABLE IF EXISTS lockouts").run()
    }
}
