import Foundation
import Hummingbird

/// The query string of the search and export pages, read once and as a browser sends a GET form
/// (`+` is a space): the filter and where the page starts.
struct SearchQuery {
    let parsed: AuditFilter.Parsed
    let cursor: AuditCursor

    /// A query that is no form (a repeated or bracketed key) or a cursor that is no `seq` is a
    /// 400: never silently "no filter", which would export the whole trail.
    static func read(_ request: Request, timeZone: TimeZone) throws -> SearchQuery {
        guard let values = try? URLEncodedFormDecoder().decode([String: String].self, from: request.uri.query ?? "") else {
            throw HTTPError(.badRequest)
        }
        let cursor: AuditCursor
        if let before = values["before"] {
            guard let seq = Int64(before), seq > 0 else { throw HTTPError(.badRequest) }
            cursor = .before(seq)
        } else if let after = values["after"] {
            guard let seq = Int64(after), seq >= 0 else { throw HTTPError(.badRequest) }
            cursor = .after(seq)
        } else {
            cursor = .newest
        }
        return SearchQuery(
            parsed: AuditFilter.parse(values.filter { AuditFilter.fieldNames.contains($0.key) }, timeZone: timeZone),
            cursor: cursor)
    }
}
