import FluentKit
import Storage

/// Migration 004 of the issuance feature: the daily quota's days (`daily_quotas`, one row per
/// scope and day) and administrators' raises with their reasons (`daily_quota_raises`). Plain
/// SQL, because the composite key is what makes the day's insert conditional.
struct CreateDailyQuotas: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Issuance.CreateDailyQuotas" }

    func prepare(on database: any Database) async throws {
        try await sql(database).raw("""
            CREATE TABLE daily_quotas (
                scope TEXT NOT NULL, day TEXT NOT NULL, quota INTEGER NOT NULL, predicted INTEGER,
                basis TEXT NOT NULL, extra INTEGER NOT NULL, used INTEGER NOT NULL,
                PRIMARY KEY (scope, day))
            """).run()
        try await sql(database).raw("CREATE INDEX daily_quotas_day ON daily_quotas (day)").run()
        try await database.schema("daily_quota_raises")
            .id()
            .field("scope", .string, .required)
            .field("day", .string, .required)
            .field("amount", .int, .required)
            .field("reason", .string, .required)
            .field("raised_by", .string, .required)
            .field("raised_at", .datetime, .required)
            .create()
        try await sql(database).raw("CREATE INDEX daily_quota_raises_day ON daily_quota_raises (day)").run()
    }

    func revert(on database: any Database) async throws {
        try await sql(database).raw("DROP TABLE IF EXISTS daily_quota_raises").run()
        try await sql(database).raw("DROP TABLE IF EXISTS daily_quotas").run()
    }
}
