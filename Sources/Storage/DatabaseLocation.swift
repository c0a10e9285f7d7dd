import Foundation

/// Where the data lives: a SQLite file (the embedded default) or a PostgreSQL server.
package enum DatabaseLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    case postgres(url: String)

    package struct ParseError: Error, CustomStringConvertible {
        package let description: String
    }

    /// Accepts `sqlite:PATH`, a bare path, or `postgres://user:pass@host:port/db`
    /// (`postgresql://` too) with libpq's `sslmode` and `sslrootcert` (``PostgresURL``).
    package init(parsing text: String) throws {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("postgres://") || trimmed.hasPrefix("postgresql://") {
            _ = try PostgresURL(trimmed)  // sslmode and sslrootcert as libpq reads them
            self = .postgres(url: trimmed)
        } else if trimmed.hasPrefix("sqlite:") {
            let path = String(trimmed.dropFirst("sqlite:".count))
            guard !path.isEmpty else { throw ParseError(description: "expected sqlite:PATH") }
            self = .sqlite(path: path)
        } else if !trimmed.isEmpty, !trimmed.contains("://") {
            self = .sqlite(path: trimmed)
        } else {
            throw ParseError(description: "expected sqlite:PATH or postgres://user:password@host:port/database")
        }
    }

    /// For logs and start-up messages: never the password.
    package var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url):
            guard var components = URLComponents(string: url) else { return "postgres://(unparseable)" }
            if components.password != nil { components.password = "***" }
            return components.string ?? "postgres://(unparseable)"
        }
    }
}
