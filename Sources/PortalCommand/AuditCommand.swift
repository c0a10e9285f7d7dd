import ArgumentParser
import CommandSupport
import Audit
import Storage

struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Work with the audit trail.", subcommands: [Verify.self])

    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check the hash chain of the audit trail and report the first broken link.")

        @OptionGroup var storage: DatabaseOptions

        func run() async throws {
            let logger = try storage.makeLogger()
            let database = try PortalDatabase(location: try storage.location(), logger: logger)
            let report: AuditChainVerifier.Report
            do {
                report = try await AuditChainVerifier().verify(on: database.database(logger: logger))
            } catch {
                await database.shutdown()
                throw CommandFailure(message: "cannot read the audit trail: \(StartupError.describe(error))")
            }
            await database.shutdown()
            if report.isIntact {
                print("audit trail intact: \(report.checkedEntries) entries")
            } else {
                throw CommandFailure(message: "audit trail broken at entry \(report.firstBrokenSeq.map(String.init) ?? "?"): \(report.problem ?? "unknown")")
            }
        }
    }
}
