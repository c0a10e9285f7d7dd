import ArgumentParser
import CommandSupport
import Foundation
import PortalWeb

/// `portal sessions end-all`: a step of every restore (docs/deployment.md §9).
struct SessionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sessions", abstract: "Work with the officers' sessions.", subcommands: [EndAll.self])

    struct EndAll: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "end-all",
            abstract: "End every session (after restoring the database: a backup brings back sessions ended since); recorded in the audit trail.")

        @OptionGroup var storage: RequiredDatabaseOptions

        func run() async throws {
            let ended = try await AuditCommand.withDatabase(storage) { db in
                try await EndAllSessions.run(reason: .command, now: Date(), on: db)
            }
            print("\(ended) sessions ended")
        }
    }
}
