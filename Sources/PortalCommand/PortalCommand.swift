import ArgumentParser
import CommandSupport
import Foundation

/// `portal serve | check-config | migrate | keygen | audit | sessions | secret`.
@main
enum Main {
    static func main() async {
        await CommandRunner.run(PortalCommand.self)
    }
}

struct PortalCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "portal",
        abstract: "Health-authority portal for issuing teleTANs.",
        version: Release.versionLine(program: "portal"),
        subcommands: [Serve.self, CheckConfig.self, Migrate.self, Keygen.self, AuditCommand.self, SessionsCommand.self, SecretCommand.self])
}
