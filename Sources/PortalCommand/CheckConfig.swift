import ArgumentParser
import Audit
import CommandSupport
import Foundation
import Logging
import Portal
import ServiceAuth
import PortalWeb
import Storage
import TeleTAN

/// `portal check-config`: reads what `serve` reads and reports every problem, one line each,
/// before anything starts. Run it as the portal's user with its environment (docs/deployment.md).
struct CheckConfig: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config",
        abstract: "Check the configuration serve would use (flags and environment) and report every problem, one line each; exit non-zero on any.",
        discussion: "Changes nothing: it creates no secret, key or database file and runs no migration.")

    @OptionGroup var options: ServeOptions

    func run() async throws {
        var logger = Logger(label: "teletan-portal-check-config")
        logger.logLevel = .critical
        let problems = ConfigurationProblems()
        let config = options.makeConfiguration(problems: problems)
        for message in fileProblems(config) { problems.add(message) }
        for group in [(config.roleGroups.officer, "--officer-group (PORTAL_OFFICER_GROUP)"), (config.roleGroups.hotline, "--hotline-group (PORTAL_HOTLINE_GROUP)"),
                      (config.roleGroups.event, "--event-group (PORTAL_EVENT_GROUP)"), (config.roleGroups.admin, "--admin-group (PORTAL_ADMIN_GROUP)")]
        where !SystemChecks.groupExists(group.0) {
            problems.add("\(group.1): the group \(group.0) does not exist (NSS does not know it), so nobody can have this role")
        }
        for message in PAMServiceCheck(service: config.pamService).problems() { problems.add(message) }
        for message in publicURLProblems(config) { problems.add(message) }
        await checkVerification(problems: problems, logger: logger)
        if (try? options.storage.location()) != nil {
            await checkDatabase(config.database, problems: problems, logger: logger)
        }

        for message in problems.messages { print("problem: \(message)") }
        guard problems.messages.isEmpty else {
            throw CommandFailure(message: "\(problems.messages.count) problem\(problems.messages.count == 1 ? "" : "s") found")
        }
        print("configuration OK: secret, checkpoint key, database, PAM service \(config.pamService), role groups, public URL, files")
    }

    private func fileProblems(_ config: PortalConfiguration) -> [String] {
        var problems: [String] = []
        let secretFlag = "--secret-file (PORTAL_SECRET_FILE)"
        if let problem = SystemChecks.secretFileProblem(config.secretFile, flag: secretFlag, createdBy: "`portal secret init` creates it") {
            problems.append(problem)
        } else {
            do { _ = try SecretFile.loadOrCreate(at: config.secretFile) } catch { problems.append("\(secretFlag): \(error)") }
        }
        let keyFlag = "--audit-checkpoint-key (PORTAL_AUDIT_CHECKPOINT_KEY)"
        if let problem = SystemChecks.secretFileProblem(config.auditCheckpointKey, flag: keyFlag, createdBy: "`portal secret init` creates it") {
            problems.append(problem)
        } else {
            do {
                _ = try CheckpointSigner.load(keyFile: config.auditCheckpointKey)
            } catch {
                problems.append("\(keyFlag): \(error)")
            }
            if !FileManager.default.fileExists(atPath: CheckpointSigner.publicKeyPath(forKeyFile: config.auditCheckpointKey)) {
                problems.append("\(keyFlag): its public key \(CheckpointSigner.publicKeyPath(forKeyFile: config.auditCheckpointKey)) is missing; those who keep checkpoints need it (serve writes it on start)")
            }
        }
        return problems
    }

    /// The public URL against the listener: the two ways an operator gets every request refused.
    private func publicURLProblems(_ config: PortalConfiguration) -> [String] {
        guard let publicURL = config.publicURL, let origin = PublicOrigin(publicURL) else { return [] }
        var problems: [String] = []
        let flag = "--public-url (PORTAL_PUBLIC_URL)"
        let loopback = ["localhost", "127.0.0.1", "[::1]"].contains(origin.host) || origin.host.hasPrefix("127.")
        if origin.scheme == "http", !loopback {
            problems.append("\(flag): \(publicURL) is plain http to another host: passwords and sessions would cross the network unencrypted; put TLS in front (docs/deployment.md section 6) and use https://")
        }
        if origin.scheme == "https", !config.trustProxy {
            problems.append("--trust-proxy (PORTAL_TRUST_PROXY): \(publicURL) is https, so a TLS proxy is in front; without --trust-proxy every sign-in seems to come from the proxy's address and one address lock locks everybody out")
        }
        if origin.scheme == "http", origin.host == config.host.lowercased(), origin.port != config.port {
            problems.append("\(flag): \(publicURL) names this listener's host but port \(origin.port), and the listener is on port \(config.port): every request would get 421")
        }
        return problems
    }

    private func checkVerification(problems: ConfigurationProblems, logger: Logger) async {
        // The service below stops at its first file; an operator fixing keys wants them all at once.
        let unreadable = verificationFileProblems()
        guard unreadable.isEmpty else {
            for message in unreadable { problems.add(message) }
            return
        }
        do {
            if let made = try await options.makeRemoteService(logger: logger) {
                await made.service.shutdown()
            }
        } catch let error as ConfigurationError {
            problems.add(error.message)
        } catch {
            problems.add("verification server settings: \(error)")
        }
    }

    /// Each key and certificate file the remote verification settings name (or default to) that
    /// this user cannot read.
    private func verificationFileProblems() -> [String] {
        guard options.verificationServer != "embedded" else { return [] }
        let cwa = options.verificationAuth == "cwa"
        let files: [(flag: String, path: String?)] = [
            ("--verification-key (PORTAL_VERIFICATION_KEY)", options.verificationKey ?? (cwa ? CWASigningKey.privateKeyFile : PortalKeys.privateKeyFile)),
            ("--verification-certificate (PORTAL_VERIFICATION_CERTIFICATE)", cwa ? options.verificationCertificate ?? CWASigningKey.certificateFile : nil),
            ("--verification-client-certificate (PORTAL_VERIFICATION_CLIENT_CERTIFICATE)", options.verificationClientCertificate),
            ("--verification-client-key (PORTAL_VERIFICATION_CLIENT_KEY)", options.verificationClientKey),
            ("--verification-ca (PORTAL_VERIFICATION_CA)", options.verificationCa),
        ]
        return files.compactMap { file in
            guard let path = file.path, let problem = SystemChecks.readProblem(path) else { return nil }
            return "\(file.flag): \(path) \(problem)"
        }
    }

    private func checkDatabase(_ location: DatabaseLocation, problems: ConfigurationProblems, logger: Logger) async {
        await DatabaseCheck.run(location, migrations: PortalApp.migrations, flag: "--database (PORTAL_DATABASE)", program: "portal", problems: problems, logger: logger)
    }
}
