import FluentKit
import Logging
import Storage

/// `check-config`'s database check, shared by `portal` and `verification-server`: the database is
/// reachable and migrated; a SQLite file that does not exist is reported, never created.
package enum DatabaseCheck {
    /// `flag` names the setting (`--database (PORTAL_DATABASE)`), `program` the command that
    /// migrates (`portal`).
    package static func run(
        _ location: DatabaseLocation, migrations: [any Migration], flag: String, program: String,
        problems: ConfigurationProblems, logger: Logger
    ) async {
        if case .sqlite(let path) = location, let problem = SystemChecks.fileAccessProblem(path) {
            problems.add(problem == "does not exist"
                ? "\(flag): \(path) does not exist: run `\(program) migrate` (with the same environment) to create it"
                : "\(flag): \(path) \(problem)")
            return
        }
        let database: PortalDatabase
        do {
            database = try PortalDatabase(location: location, logger: logger)
        } catch let error as DatabaseLocation.ParseError {
            problems.add("\(flag): \(error.description)")  // e.g. no trust store for sslmode=verify-full
            return
        } catch {
            problems.add("\(flag): \(StartupError.describe(error))")
            return
        }
        do {
            let pending = try await database.migrationStatus(migrations, logger: logger).filter(\.isPending).map(\.name)
            if !pending.isEmpty {
                problems.add("\(flag): \(pending.count) migration\(pending.count == 1 ? "" : "s") pending (\(pending.joined(separator: ", "))): run `\(program) migrate`")
            }
        } catch {
            problems.add("\(flag): cannot reach \(location): \(StartupError.describe(error))")
        }
        await database.shutdown()
    }
}
