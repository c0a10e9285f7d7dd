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
            // By hand: URLComponents cannot read a cluster's host list (`a:5432,b:5432`).
            guard let schemeEnd = url.range(of: "://") else { return "postgres://(unparseable)" }
            let rest = url[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            guard let at = rest[..<authorityEnd].lastIndex(of: "@"),
                  let colon = rest[..<at].firstIndex(of: ":") else { return url }
            return String(url[..<rest.index(after: colon)]) + "***" + String(url[at...])
        }
    }
}
