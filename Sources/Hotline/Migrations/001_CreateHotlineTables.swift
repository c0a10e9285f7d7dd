import FluentKit
import Storage

/// Migration 001 of the hotline feature: calls, the callback queue, and the fingerprints of
/// numbers that received a teleTAN (repeat-caller warnings).
struct CreateHotlineTables: AsyncMigration {
    /// What databases record it under: fixed forever.
    var name: String { "Hotline.CreateHotlineTables" }

    func prepare(on database: any Database) async throws {
        // A call: who took it, the checks and their answers, how it ended, the teleTAN issued
        // (keyed fingerprint only). No phone number, no name.
        try await database.schema("hotline_calls")
            .id()
            .field("agent", .string, .required)
            .field("started_at", .datetime, .required)
            .field("ended_at", .datetime)
            .field("outcome", .string)
            .field("checks", .string, .required)
            .field("callback_id", .uuid)
            .field("phone_fingerprint", .string)
            .field("teletan_fingerprint", .string)
            .field("teletan_issued_at", .datetime)
            .field("readback_attempts", .int, .required)
            .field("readback_result", .string)
            // The last read-back's result until the call page shows it (sealed: it may name
            // characters of the teleTAN).
            .field("readback_sealed", .string)
            .create()
        try await sql(database).raw("CREATE INDEX hotline_calls_started ON hotline_calls (started_at)").run()
        // A callback: the caller's number and name sealed (AES-GCM), deleted when it ends.
        try await database.schema("hotline_callbacks")
            .id()
            .field("call_id", .uuid, .required)
            .field("created_at", .datetime, .required)
            .field("sealed_contact", .string)
            .field("phone_fingerprint", .string)
            .field("status", .string, .required)
            .field("outcome", .string)
            .field("attempts", .int, .required)
            .field("taken_by", .string)
            .field("taken_at", .datetime)
            .field("closed_at", .datetime)
            .create()
        try await sql(database).raw("CREATE INDEX hotline_callbacks_status ON hotline_callbacks (status, created_at)").run()
        try await database.schema("hotline_number_history")
            .field("fingerprint", .string, .required)
            .field("issued_at", .datetime, .required)
            .create()
        try await sql(database).raw("CREATE INDEX hotline_number_history_fingerprint ON hotline_number_history (fingerprint)").run()
    }

    func revert(on database: any Database) async throws {
        try await database.schema("hotline_number_history").delete()
        try await database.schema("hotline_callbacks").delete()
        try await database.schema("hotline_calls").delete()
    }
}
