import ArgumentParser
import CommandSupport
import Foundation
import Logging
import Storage
import VerificationServer

/// `verification-server check-config`: reads what `serve` reads and reports the problems, one line
/// each, before anything starts. Run it as the server's user with its environment
/// (docs/deployment.md section 13). Creates nothing: no secret, no database file, no migration.
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration serve would use (flags and environment) and report the problems, one line each; exit non-zero on any.",
        discussion: "Every unreadable file is reported in one run; the other settings are checked once the files can be read.")

    @OptionGroup var serve: Serve

    func run() async throws {
        var logger = Logger(label: "verification-server-check-config")
        logger.logLevel = .critical
        let problems = ConfigurationProblems()
        let unreadable = fileProblems()
        for message in unreadable { problems.add(message) }
        // serve's own checks stop at the first file they cannot read, which is reported above.
        if unreadable.isEmpty { _ = problems.check { try serve.makeConfiguration() } }
        if let location = problems.check({ try serve.common.location() }) {
            await checkDatabase(location, problems: problems, logger: logger)
        }
        for message in problems.messages { print("problem: \(message)") }
        guard problems.messages.isEmpty else {
            throw CommandFailure(message: "\(problems.messages.count) problem\(problems.messages.count == 1 ? "" : "s") found")
        }
        print("configuration OK: listeners, secret, trusted portal keys, TLS files, database")
    }

    /// Each file the settings name that this user cannot read; the secret only if it exists
    /// (serve creates it at its first start), and then it must be private.
    private func fileProblems() -> [String] {
        var files: [(flag: String, path: String)] = serve.trustedPortalKey.map { ("--trusted-portal-key (VERIFICATION_TRUSTED_PORTAL_KEYS)", $0) }
        let optional: [(String, String?)] = [
            ("--tls-certificate (VERIFICATION_TLS_CERTIFICATE)", serve.tlsCertificate),
            ("--tls-key (VERIFICATION_TLS_KEY)", serve.tlsKey),
            ("--internal-tls-certificate (VERIFICATION_INTERNAL_TLS_CERTIFICATE)", serve.internalTlsCertificate),
            ("--internal-tls-key (VERIFICATION_INTERNAL_TLS_KEY)", serve.internalTlsKey),
        ]
        files += optional.compactMap { flag, path in path.map { (flag, $0) } }
        var problems = files.compactMap { file in SystemChecks.readProblem(file.path).map { "\(file.flag): \(file.path) \($0)" } }
        if FileManager.default.fileExists(atPath: serve.secretFile),
           let problem = SystemChecks.secretFileProblem(serve.secretFile, flag: "--secret-file (VERIFICATION_SECRET_FILE)", createdBy: "serve creates it") {
            problems.append(problem)
        }
        return problems
    }

    private func checkDatabase(_ location: DatabaseLocation, problems: ConfigurationProblems, logger: Logger) async {
        await DatabaseCheck.run(location, migrations: VerificationServerApp.migrations, flag: "--database (VERIFICATION_DATABASE)", program: "verification-server", problems: problems, logger: logger)
    }
}
