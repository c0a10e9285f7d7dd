import ArgumentParser
import CommandSupport
import Foundation
import Hotline
import Hummingbird
import Issuance
import Logging
import NIOSSL
import Portal
import PortalWeb
import ServiceAuth
import Storage
import TeleTAN
import VerificationClient

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the portal (migrations run first).")

    @OptionGroup var options: ServeOptions

    func run() async throws {
        let config = try options.makeConfiguration()
        let logger = try options.storage.makeLogger()
        let made = try await options.makeRemoteService(logger: logger)
        let remote = made?.service
        let portal: PortalApp
        do {
            portal = try await PortalApp(configuration: config, logger: logger, verification: remote, certs: made?.certs)
        } catch {
            await remote?.shutdown()
            throw CommandFailure(message: "cannot start: \(StartupError.describe(error))")
        }
        logger.info("portal starting", metadata: [
            "address": "\(config.host):\(config.port)", "database": "\(config.database)", "pam_service": "\(config.pamService)",
            "verification_auth": "\(remote == nil ? "embedded" : options.verificationAuth)",
        ])
        // Some PAM problems look like wrong passwords to the person signing in (pam_oath reports
        // a file it cannot lock as "Authentication failure"): say so once, where operators look.
        for problem in PAMServiceCheck(service: config.pamService).problems() {
            logger.error("PAM service problem; sign-ins through it will fail", metadata: ["problem": "\(problem)"])
        }
        do {
            try await portal.run()
        } catch {
            await portal.shutdown()
            await remote?.shutdown()
            throw error
        }
        await portal.shutdown()
        await remote?.shutdown()
        logger.info("portal stopped")
    }
}

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a key for signing requests to a verification server.",
        discussion: """
            portal (default): DIR/portal-key.pem (keep it private) and DIR/portal-key.pub.pem (give it to our \
            verification server's --trusted-portal-key).
            cwa: DIR/cwa-key.pem (RSA 3072 bits, keep it private) and DIR/cwa-certificate.pem (self-signed X.509, \
            valid 2 years), for `portal serve --verification-auth cwa --verification-key DIR/cwa-key.pem \
            --verification-certificate DIR/cwa-certificate.pem`.
            """)

    @Option(help: "Directory for the two files (created if missing; existing keys are never overwritten)")
    var out: String
    @Option(help: "The token format the key is for: portal or cwa (as serve's --verification-auth)")
    var verificationAuth = "portal"
    @Option(help: "With cwa: the certificate's subject and issuer common name")
    var commonName = "teletan-portal"

    func run() throws {
        switch verificationAuth {
        case "portal":
            do {
                let (privateKey, publicKey) = try PortalKeys.generate(into: out)
                print("private key: \(privateKey)\npublic key:  \(publicKey)")
            } catch let error as PortalKeys.Failure {
                throw CommandFailure(message: error.description)
            }
        case "cwa":
            do {
                let (privateKey, certificate) = try CWASigningKey.generate(into: out, commonName: commonName)
                print("private key: \(privateKey)\ncertificate: \(certificate)")
            } catch let error as CWASigningKey.Failure {
                throw CommandFailure(message: error.description)
            }
        default:
            throw ConfigurationError(message: "--verification-auth: expected portal or cwa, got '\(verificationAuth)'")
        }
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create or update the database tables, then exit.")

    @OptionGroup var storage: DatabaseOptions

    @Flag(help: "List this release's migrations, applied (with the time) or pending, and change nothing")
    var status = false

    func run() async throws {
        let logger = try storage.makeLogger()
        if status {
            try await MigrateCommand.status(location: try storage.location(), migrations: PortalApp.migrations, logger: logger)
        } else {
            try await MigrateCommand.run(location: try storage.location(), migrations: PortalApp.migrations, logger: logger)
        }
    }
}
