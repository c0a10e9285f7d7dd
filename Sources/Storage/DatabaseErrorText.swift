import FluentPostgresDriver
import PostgresNIO
import SQLiteNIO

/// What an operator needs from a SQLite error (its message) or a PostgreSQL error: the server's message ("password
/// authentication failed for user ...", "database ... does not exist") or the connection
/// failure. Never the error's own description, which can quote the connection string.
package enum DatabaseErrorText {
    package static func describe(_ error: any Error) -> String? {
        if let error = error as? SQLiteError {
            return "SQLite said: \(error.message)"
        }
        guard let error = error as? PSQLError else { return nil }
        if let message = error.serverInfo?[.message] {
            return "PostgreSQL said: \(message)"
        }
        if let underlying = error.underlying {
            return "cannot connect to PostgreSQL: \(underlying)"
        }
        return nil
    }
}
