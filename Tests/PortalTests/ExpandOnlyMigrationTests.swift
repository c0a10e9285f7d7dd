import FluentKit
import Foundation
import SQLKit
import Storage
import TestSupport
import VerificationServer
import XCTest
@testable import Portal

/// Migrations only expand the schema, so the previous release still runs on a migrated database
/// (the rollback in docs/deployment.md relies on it): no table or column disappears or changes
/// type, no column becomes NOT NULL, and a new column in an existing table is nullable or has a
/// default. A migration that must contract is named in CHANGELOG.md on a line that says
/// "contracting"; the release notes then say the rollback needs the backup.
final class ExpandOnlyMigrationTests: XCTestCase {
    func testEveryMigrationOnlyExpandsTheSchema() async throws {
        let allowed = try ContractingMigrations.fromChangelog()
        for migrations in [PortalApp.migrations, VerificationServerApp.migrations] {
            try await TestDatabases.forEach { location in
                let problems = try await SchemaHistory.problems(of: migrations, on: location, allowed: allowed)
                XCTAssertEqual(problems, [], "\(location)")
            }
        }
    }

    /// The check itself: a migration that drops, renames or tightens is caught, unless the
    /// changelog marks it.
    func testTheCheckCatchesAContractingMigrationUnlessTheChangelogMarksIt() async throws {
        let migrations: [any Migration] = [CreateSample(), DropAndTighten()]
        try await TestDatabases.forEach { location in
            let caught = try await SchemaHistory.problems(of: migrations, on: location, allowed: [])
            XCTAssertEqual(caught, [
                "DropAndTighten drops or renames column sample.nickname",
                "DropAndTighten makes sample.note NOT NULL",
                "DropAndTighten adds sample.code as NOT NULL without a default",
                "DropAndTighten drops or renames table sample_old",
            ], "\(location)")
            try await TestDatabases.reset(location, logger: TestDatabases.testLogger)
            let marked = try await SchemaHistory.problems(of: migrations, on: location, allowed: ["DropAndTighten"])
            XCTAssertEqual(marked, [], "\(location)")
        }
        XCTAssertEqual(
            ContractingMigrations.parse("- `Portal.AddX`: new table\n- `Audit.DropY` (contracting: drops audit_y)\n"), ["Audit.DropY"])
    }

    private struct CreateSample: AsyncMigration {
        var name: String { "CreateSample" }
        func prepare(on database: any Database) async throws {
            try await database.schema("sample").id().field("nickname", .string).field("note", .string).create()
            try await database.schema("sample_old").id().create()
        }
        func revert(on database: any Database) async throws {}
    }

    private struct DropAndTighten: AsyncMigration {
        var name: String { "DropAndTighten" }
        func prepare(on database: any Database) async throws {
            // Rebuilt rather than altered: SQLite cannot drop a column or change NOT NULL in place.
            try await database.schema("sample").delete()
            try await database.schema("sample").id().field("note", .string, .required).field("code", .string, .required).create()
            try await database.schema("sample_old").delete()
        }
        func revert(on database: any Database) async throws {}
    }
}

/// Migration names CHANGELOG.md marks as contracting.
enum ContractingMigrations {
    static func fromChangelog() throws -> Set<String> {
        parse(try String(contentsOf: repositoryRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8))
    }

    /// Every `Name` in backticks on a line that says "contracting".
    static func parse(_ changelog: String) -> Set<String> {
        var names: Set<String> = []
        for line in changelog.split(separator: "\n") where line.lowercased().contains("contracting") {
            let parts = line.split(separator: "`", omittingEmptySubsequences: false)
            for index in stride(from: 1, to: parts.count, by: 2) { names.insert(String(parts[index])) }
        }
        return names
    }
}

/// Applies migrations one at a time and compares the schema before and after each.
enum SchemaHistory {
    struct Column: Equatable {
        let type: String
        let nullable: Bool
        let hasDefault: Bool
    }

    typealias Schema = [String: [String: Column]]

    static func problems(of migrations: [any Migration], on location: DatabaseLocation, allowed: Set<String>) async throws -> [String] {
        let database = try PortalDatabase(location: location, logger: TestDatabases.testLogger)
        do {
            var problems: [String] = []
            var before = try await schema(of: database)
            for count in 1...migrations.count {
                try await database.migrate(Array(migrations.prefix(count)), logger: TestDatabases.testLogger)
                let after = try await schema(of: database)
                let name = migrations[count - 1].name
                if !allowed.contains(name) {
                    problems += compare(before, after).map { "\(name) \($0)" }
                }
                before = after
            }
            await database.shutdown()
            return problems
        } catch {
            await database.shutdown()
            throw error
        }
    }

    static func compare(_ before: Schema, _ after: Schema) -> [String] {
        var problems: [String] = []
        for table in before.keys.sorted() {
            guard let newColumns = after[table] else {
                problems.append("drops or renames table \(table)")
                continue
            }
            let oldColumns = before[table]!
            for column in oldColumns.keys.sorted() {
                guard let new = newColumns[column] else {
                    problems.append("drops or renames column \(table).\(column)")
                    continue
                }
                let old = oldColumns[column]!
                if new.type != old.type { problems.append("changes the type of \(table).\(column) from \(old.type) to \(new.type)") }
                if old.nullable, !new.nullable { problems.append("makes \(table).\(column) NOT NULL") }
            }
            for column in newColumns.keys.sorted() where oldColumns[column] == nil {
                let new = newColumns[column]!
                if !new.nullable, !new.hasDefault {
                    problems.append("adds \(table).\(column) as NOT NULL without a default")
                }
            }
        }
        // Tables first, then the table-level problems, in the order a reader checks them.
        return problems.filter { !$0.hasPrefix("drops or renames table") } + problems.filter { $0.hasPrefix("drops or renames table") }
    }

    static func schema(of database: PortalDatabase) async throws -> Schema {
        let sql = database.database(logger: TestDatabases.testLogger) as! any SQLDatabase
        var schema: Schema = [:]
        if database.location.isSQLite {
            struct Table: Decodable { let name: String }
            struct Info: Decodable {
                let name: String
                let type: String
                let notnull: Int
                let dflt_value: String?
                let pk: Int
            }
            let tables = try await sql.raw("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
                .all(decoding: Table.self)
            for table in tables {
                let columns = try await sql.raw("SELECT * FROM pragma_table_info(\(bind: table.name))").all(decoding: Info.self)
                schema[table.name] = Dictionary(uniqueKeysWithValues: columns.map {
                    ($0.name, Column(type: $0.type.uppercased(), nullable: $0.notnull == 0 && $0.pk == 0, hasDefault: $0.dflt_value != nil))
                })
            }
        } else {
            struct Info: Decodable {
                let table_name: String
                let column_name: String
                let data_type: String
                let is_nullable: String
                let column_default: String?
            }
            let columns = try await sql.raw("""
                SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
                WHERE table_schema = current_schema()
                """).all(decoding: Info.self)
            for column in columns {
                schema[column.table_name, default: [:]][column.column_name] = Column(
                    type: column.data_type, nullable: column.is_nullable == "YES", hasDefault: column.column_default != nil)
            }
        }
        return schema
    }
}
