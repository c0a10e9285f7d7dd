import AccessControl
import Audit
import Foundation
import Hummingbird
import PortalWeb
import Storage

/// `/admin/audit/export.csv` and `.jsonl`: the current filter's entries, oldest first, streamed in
/// batches so memory stays flat however many there are. The export ends at the entry that was
/// newest when it began (one consistent snapshot) and is itself an audit entry, written when the
/// last byte has gone out, with the number of rows.
struct ExportController: Sendable {
    enum Format: String {
        case csv, jsonl
        var contentType: String { self == .csv ? "text/csv; charset=utf-8" : "application/jsonl; charset=utf-8" }
    }

    let database: PortalDatabase
    let search: AuditSearch
    let screen: TeleTANScreen
    let audit: AuditLog
    let renderer: PageRenderer
    let now: @Sendable () -> Date
    /// Rows per database round trip.
    let batchSize = 5000

    func addRoutes(to routes: DeclaredRoutes) {
        routes.group("/admin/audit", access: .permission(.reviewAuditTrail))
            .get("export.csv") { request, context in try await export(.csv, request: request, context: context) }
            .get("export.jsonl") { request, context in try await export(.jsonl, request: request, context: context) }
    }

    func export(_ format: Format, request: Request, context: PermittedContext) async throws -> Response {
        let acting = context.acting
        let db = database.database(logger: context.logger)
        let parsed = try await screen.screen(try SearchQuery.read(request, timeZone: renderer.timeZone).parsed, on: db)
        guard parsed.invalid.isEmpty, parsed.teleTANFields.isEmpty else { throw HTTPError(.badRequest) }
        // The admin's own page views stay in: an export is evidence, and an unfiltered one must
        // verify as the whole chain.
        let filter = parsed.filter
        let last = try await search.head(on: db)
        let prepared = try await search.prepare(filter, on: db)
        let started = now()
        let filename = "audit-\(Self.stamp(started)).\(format.rawValue)"
        var headers: HTTPFields = [
            .contentType: format.contentType,
            .contentDisposition: "attachment; filename=\"\(filename)\"",
            .cacheControl: "no-store",
        ]
        headers[.init("X-Content-Type-Options")!] = "nosniff"
        if request.method == .head { return Response(status: .ok, headers: headers) }
        let (search, audit, batchSize, now) = (search, audit, batchSize, now)
        let body = ResponseBody { writer in
            var rows = 0
            do {
                if format == .csv { try await writer.write(ByteBuffer(string: AuditCSV.header)) }
                // No prepared filter: its time range holds no entry; the export is the header only.
                var after: Int64 = 0
                while let prepared {
                    let batch = try await search.batch(prepared, after: after, upTo: last, limit: batchSize, on: db)
                    guard let lastRow = batch.last else { break }
                    var bytes: [UInt8] = []
                    bytes.reserveCapacity(batch.count * 400)
                    for row in batch {
                        switch format {
                        case .csv: AuditCSV.write(row, into: &bytes)
                        case .jsonl: row.exportRecord.appendLine(to: &bytes)
                        }
                    }
                    try await writer.write(ByteBuffer(bytes: bytes))
                    rows += batch.count
                    after = lastRow.seq
                    if batch.count < batchSize { break }
                }
            } catch {
                // The download broke off (the browser went away, the database failed): say so.
                var details = ExportController.detailsFor(format: format, filter: filter, rows: rows, last: last)
                details["reason"] = "interrupted"
                _ = try? await audit.append(AuditEvent(.auditExport, .failure, by: acting, details: details), at: now(), on: db)
                throw error
            }
            try await writer.finish(nil)
            try await audit.append(AuditEvent(
                .auditExport, .success, by: acting, details: ExportController.detailsFor(format: format, filter: filter, rows: rows, last: last)),
                at: now(), on: db)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    static func detailsFor(format: Format, filter: AuditFilter, rows: Int, last: Int64) -> [String: String] {
        var details = AuditController.filterDetails(filter)
        details["format"] = format.rawValue
        details["rows"] = String(rows)
        details["up_to_seq"] = String(last)
        return details
    }

    static func stamp(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day().dateSeparator(.omitted).time(includingFractionalSeconds: false).timeSeparator(.omitted))
    }
}
