import AccessControl
import Audit
import FluentKit
import Foundation
import SQLKit
import Storage

/// A filter made ready to run: its time range turned into a `seq` range and its action prefix
/// into the actions it stands for, once (an export runs hundreds of batches with it).
package struct PreparedFilter: Sendable {
    let filter: AuditFilter
    let seqRange: ClosedRange<Int64>?
    /// The actions starting with the typed action, never empty; nil: no action filter.
    let actions: [String]?
}

/// Where a page of results starts: the newest entries, entries older than a `seq` (the "older"
/// link), or entries newer than one ("newer").
package enum AuditCursor: Sendable, Equatable {
    case newest
    case before(Int64)
    case after(Int64)
}

/// A page of results, newest first, with the cursors of the pages around it (nil: none).
package struct AuditPage: Sendable {
    package let entries: [AuditRow]
    package let older: Int64?
    package let newer: Int64?
}

/// Searches the audit trail by keyset on `seq`: never OFFSET, never a COUNT, so the first page of
/// any filter costs the same on ten million entries as on ten thousand, and entries written while
/// an admin pages neither shift nor repeat what the next page shows.
package struct AuditSearch: Sendable {
    package let pageSize: Int
    /// Action branches in one UNION ALL statement (SQLite's limit is 500).
    let branchesPerStatement: Int

    package init(pageSize: Int = 50, branchesPerStatement: Int = 100) {
        self.pageSize = pageSize
        self.branchesPerStatement = max(1, branchesPerStatement)
    }

    /// Works out the time range's `seq` range and the actions of the action prefix; nil when no
    /// entry can match.
    package func prepare(_ filter: AuditFilter, on db: any Database) async throws -> PreparedFilter? {
        var actions: [String]?
        if let typed = filter.action {
            let matching = try await knownActions(on: db).filter { $0.lowercased().hasPrefix(typed.lowercased()) }
            guard !matching.isEmpty else { return nil }
            actions = matching
        }
        guard filter.from != nil || filter.to != nil else { return PreparedFilter(filter: filter, seqRange: nil, actions: actions) }
        guard let bounds = try await seqBounds(from: filter.from, to: filter.to, on: db) else { return nil }
        return PreparedFilter(filter: filter, seqRange: bounds.lowest...bounds.highest, actions: actions)
    }

    /// A page by keyset, in one statement. An action prefix that stands for several actions is a
    /// `UNION ALL` of one keyset query per action, each a short range of the (action, seq) index,
    /// ordered and limited once outside: one query with `action IN (...)` would have to sort every
    /// matching entry to find the newest, and one query per action costs a round trip each.
    package func page(_ filter: AuditFilter, at cursor: AuditCursor, on db: any Database) async throws -> AuditPage {
        guard let prepared = try await prepare(filter, on: db) else { return AuditPage(entries: [], older: nil, newer: nil) }
        let ascending: Bool
        if case .after = cursor { ascending = true } else { ascending = false }
        let direction: SQLDirection = ascending ? .ascending : .descending
        func keyset(_ action: String?) -> SQLSelectBuilder {
            var query = select(prepared, action: action, on: db)
            switch cursor {
            case .newest: break
            case .before(let seq): query = query.where("seq", .lessThan, seq)
            case .after(let seq): query = query.where("seq", .greaterThan, seq)
            }
            return query.orderBy("seq", direction).limit(pageSize + 1)
        }
        // SQLite allows ORDER BY and LIMIT in a compound SELECT's branches only inside a subselect,
        // so each branch is `SELECT * FROM (<keyset query>) AS bN`.
        func union(_ actions: ArraySlice<String>) -> SQLSelectBuilder {
            let branches: [any SQLExpression] = actions.enumerated().map { index, action in
                var branch = SQLSelect()
                branch.columns = [SQLLiteral.all]
                branch.tables = [SQLAlias(SQLGroupExpression(keyset(action).select), as: SQLIdentifier("b\(index)"))]
                return branch
            }
            return sql(db).select().column(SQLRaw(AuditRow.columns))
                .from(SQLAlias(SQLGroupExpression(SQLList(branches, separator: SQLRaw(" UNION ALL "))), as: SQLIdentifier("merged")))
                .orderBy("seq", direction).limit(pageSize + 1)
        }
        guard let actions = prepared.actions, actions.count > 1 else {
            return try await page(keyset(prepared.actions?.first).all().map { try AuditRow($0) }, ascending: ascending, at: cursor)
        }
        // One statement for any prefix the portal's own actions (a few dozen) can make; SQLite
        // takes at most 500 branches in one compound SELECT, so a trail with more actions than
        // that (written by other versions) gets one statement per hundred, merged here.
        var rows: [AuditRow] = []
        for start in stride(from: 0, to: actions.count, by: branchesPerStatement) {
            let chunk = actions[start..<min(start + branchesPerStatement, actions.count)]
            rows += try await union(chunk).all().map { try AuditRow($0) }
        }
        rows.sort { ascending ? $0.seq < $1.seq : $0.seq > $1.seq }
        return page(Array(rows.prefix(pageSize + 1)), ascending: ascending, at: cursor)
    }

    /// The page made of up to `pageSize + 1` rows in query order (the extra row: there is more).
    private func page(_ queried: [AuditRow], ascending: Bool, at cursor: AuditCursor) -> AuditPage {
        var rows = queried
        let more = rows.count > pageSize
        rows = Array(rows.prefix(pageSize))
        if ascending { rows.reverse() }
        switch cursor {
        case .newest:
            return AuditPage(entries: rows, older: more ? rows.last?.seq : nil, newer: nil)
        case .before(let seq):
            return AuditPage(entries: rows, older: more ? rows.last?.seq : nil, newer: rows.first.map(\.seq) ?? (seq == .min ? seq : seq - 1))
        case .after(let seq):
            return AuditPage(entries: rows, older: rows.last.map(\.seq) ?? (seq == .max ? seq : seq + 1), newer: more ? rows.first?.seq : nil)
        }
    }

    /// One entry by its sequence number.
    package func entry(_ seq: Int64, on db: any Database) async throws -> AuditRow? {
        try await sql(db).select().column(SQLRaw(AuditRow.columns)).from("audit_log").where("seq", .equal, seq)
            .first().map { try AuditRow($0) }
    }

    /// The entries matching `filter` with `seq` after `after` up to `last`, oldest first, at most
    /// `limit` (the export's batches).
    package func batch(_ filter: PreparedFilter, after: Int64, upTo last: Int64, limit: Int, on db: any Database) async throws -> [AuditRow] {
        try await select(filter, action: nil, on: db).where("seq", .greaterThan, after).where("seq", .lessThanOrEqual, last)
            .orderBy("seq", .ascending).limit(limit).all().map { try AuditRow($0) }
    }

    /// The newest `seq` written so far: an export stops there, so it is one consistent snapshot.
    package func head(on db: any Database) async throws -> Int64 {
        struct Row: Decodable { let seq: Int64? }
        return try await sql(db).raw("SELECT MAX(seq) AS seq FROM audit_log").first(decoding: Row.self)?.seq ?? 0
    }

    /// Every action the trail holds, by a loose index scan (one probe of the (action, seq) index
    /// per distinct action, a few dozen), so an action prefix costs the same on any trail length.
    func knownActions(on db: any Database) async throws -> [String] {
        struct Row: Decodable { let action: String? }
        return try await sql(db).raw("""
            WITH RECURSIVE known(action) AS (
                SELECT MIN(action) FROM audit_log
                UNION ALL
                SELECT (SELECT MIN(action) FROM audit_log WHERE action > known.action) FROM known WHERE known.action IS NOT NULL
            )
            SELECT action FROM known WHERE action IS NOT NULL LIMIT 1000
            """).all(decoding: Row.self).compactMap(\.action)
    }

    /// The filter as SQL: `action` one of the prefix's actions (nil: all of them, the export's
    /// batches, which read in `seq` order anyway).
    private func select(_ prepared: PreparedFilter, action: String?, on db: any Database) -> SQLSelectBuilder {
        let filter = prepared.filter
        var query = sql(db).select().column(SQLRaw(AuditRow.columns)).from("audit_log")
        // `lower(actor)` and `substr(subject, 1, 12)` exactly as the indexes of migration
        // AuditReview.AddSearchIndexes have them.
        // Any spelling finds the person's entries: the name as written (the canonical name of a
        // signed-in user) and its AccountKey (the actor of failed sign-ins, typed any way).
        if let actor = filter.actor {
            // lower() on both sides as written, as SQLite's lower() folds ASCII only.
            let spellings = SQLGroupExpression([SQLFunction("lower", args: SQLBind(actor)), SQLBind(AccountKey.of(actor))])
            query = query.where(SQLRaw("lower(actor)"), .in, spellings)
        }
        if let action {
            query = query.where("action", .equal, SQLBind(action))
        } else if let actions = prepared.actions {
            query = query.where("action", .in, SQLBind.group(actions))
        }
        for (column, value) in [("outcome", filter.outcome?.rawValue), ("address", filter.address), ("subject", filter.subject)] {
            if let value { query = query.where(SQLIdentifier(column), .equal, SQLBind(value)) }
        }
        if let start = filter.subjectStart {
            query = query.where(SQLRaw("substr(subject, 1, \(start.count))"), .equal, SQLBind(start))
        }
        if let viewer = filter.hiddenViewer {
            // Written out so that an entry without an actor is never dropped by a NULL.
            query = query.where { group in
                group.where("action", .notEqual, SQLBind("audit.view")).orWhere("actor", .is, SQLLiteral.null)
                    .orWhere("actor", .notEqual, SQLBind(viewer))
            }
        }
        if let range = prepared.seqRange {
            query = query.where("seq", .greaterThanOrEqual, range.lowerBound).where("seq", .lessThanOrEqual, range.upperBound)
        }
        if let from = filter.from { query = query.where("occurred_at", .greaterThanOrEqual, SQLBind(from)) }
        if let to = filter.to { query = query.where("occurred_at", .lessThan, SQLBind(to)) }
        return query
    }

    /// How far apart in time two entries in `seq` order may be written the other way round:
    /// instances take the time before they queue for the chain head, and their clocks differ.
    static let clockMargin: TimeInterval = 5 * 60

    /// The `seq` range a time range lies in, from two single-row lookups on the `occurred_at`
    /// index, so that a day from a year ago is one short index range instead of a walk back over
    /// everything newer. Assumes an entry is never more than ``clockMargin`` older than one
    /// written before it: then every entry from `from` on comes after the newest one older than
    /// `from - margin`, and every entry before `to` before the oldest one from `to + margin` on.
    /// The exact time condition still applies within the range.
    private func seqBounds(from: Date?, to: Date?, on db: any Database) async throws -> (lowest: Int64, highest: Int64)? {
        struct Row: Decodable { let seq: Int64 }
        var lowest: Int64 = 0, highest = Int64.max
        if let from, let before = try await sql(db).select().column("seq").from("audit_log")
            .where("occurred_at", .lessThan, SQLBind(from.addingTimeInterval(-Self.clockMargin)))
            .orderBy("occurred_at", .descending).limit(1).first(decoding: Row.self) {
            lowest = before.seq + 1
        }
        if let to, let after = try await sql(db).select().column("seq").from("audit_log")
            .where("occurred_at", .greaterThanOrEqual, SQLBind(to.addingTimeInterval(Self.clockMargin)))
            .orderBy("occurred_at", .ascending).limit(1).first(decoding: Row.self) {
            highest = after.seq - 1
        }
        return lowest <= highest ? (lowest, highest) : nil
    }
}
