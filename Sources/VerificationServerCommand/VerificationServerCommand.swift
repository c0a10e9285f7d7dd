import ArgumentParser
import CommandSupport
import Foundation
import Logging
import Storage
import VerificationServer

/// `verification-server serve | migrate | check-config`: the CWA v1 verification API over the same teleTAN
/// code the portal embeds.
@main
enum Main {
    static func main() async {
        await CommandRunner.run(VerificationServerCommand.self)
    }
}

struct VerificationServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verification-server",
        abstract: "CWA-compatible verification server: teleTAN → registration token → TAN → verification.",
        version: Release.versionLine(program: "verification-server"),
        subcommands: [Serve.self, Migrate.self, CheckConfig.self])
}

struct CommonOptions: ParsableArguments {
    @Option(help: "sqlite:PATH or postgres://user:password@host:port/database (env VERIFICATION_DATABASE)")
    var database: String = Environment.value("VERIFICATION_DATABASE") ?? "sqlite:verification.sqlite"
    @Option(help: "Log level (env VERIFICATION_LOG_LEVEL)")
    var logLevel: String = Environment.value("VERIFICATION_LOG_LEVEL") ?? "info"

    func location() throws -> DatabaseLocation {
        try OptionParser.database(database, env: "VERIFICATION_DATABASE")
    }

    func makeLogger() throws -> Logger {
        try OptionParser.logger(label: "verification-server", level: logLevel, env: "VERIFICATION_LOG_LEVEL")
    }
}

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run both listeners (migrations run first).")

    @OptionGroup var common: CommonOptions
    @Option(help: "PostgreSQL connections per instance (env VERIFICATION_DATABASE_POOL_SIZE)")
    var databasePoolSize: String = Environment.value("VERIFICATION_DATABASE_POOL_SIZE") ?? "16"
    @Option(help: "Address of the app-facing listener (env VERIFICATION_HOST)")
    var host: String = Environment.value("VERIFICATION_HOST") ?? "127.0.0.1"
    @Option(help: "Port of the app-facing listener (env VERIFICATION_PORT)")
    var port: String = Environment.value("VERIFICATION_PORT") ?? "8081"
    @Option(help: "Address of the internal listener (env VERIFICATION_INTERNAL_HOST)")
    var internalHost: String = Environment.value("VERIFICATION_INTERNAL_HOST") ?? "127.0.0.1"
    @Option(help: "Port of the internal listener: teleTAN creation, TAN verification (env VERIFICATION_INTERNAL_PORT)")
    var internalPort: String = Environment.value("VERIFICATION_INTERNAL_PORT") ?? "8082"
    @Option(help: "Server secret file, created with mode 600 if missing (env VERIFICATION_SECRET_FILE)")
    var secretFile: String = Environment.value("VERIFICATION_SECRET_FILE") ?? "verification.secret"
    @Option(help: "Public key of a portal allowed to request teleTANs; repeat for several (env VERIFICATION_TRUSTED_PORTAL_KEYS, comma-separated)")
    var trustedPortalKey: [String] = (Environment.value("VERIFICATION_TRUSTED_PORTAL_KEYS") ?? "")
        .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    @Option(help: "The audience (aud) a portal's token must name: this server's name, the portals' --verification-audience; give each server its own when a portal key is trusted by more than one (env VERIFICATION_AUDIENCE)")
    var audience: String = Environment.value("VERIFICATION_AUDIENCE") ?? ServerConfiguration().audience
    @Option(help: "Base URL of a Keycloak realm server whose RS256 tokens are accepted (its keys from URL/auth/realms/cwa/protocol/openid-connect/certs); repeat for several (env VERIFICATION_TRUSTED_IAM, comma-separated)")
    var trustedIam: [String] = (Environment.value("VERIFICATION_TRUSTED_IAM") ?? "")
        .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    @Option(help: "teleTANs per rolling hour, both types (env VERIFICATION_TELETANS_PER_HOUR)")
    var teletansPerHour: String = Environment.value("VERIFICATION_TELETANS_PER_HOUR") ?? "1000"
    @Option(help: "TLS certificate chain (PEM) of the app-facing listener (env VERIFICATION_TLS_CERTIFICATE)")
    var tlsCertificate: String? = Environment.value("VERIFICATION_TLS_CERTIFICATE")
    @Option(help: "TLS private key (PEM) of the app-facing listener (env VERIFICATION_TLS_KEY)")
    var tlsKey: String? = Environment.value("VERIFICATION_TLS_KEY")
    @Option(help: "TLS certificate chain (PEM) of the internal listener (env VERIFICATION_INTERNAL_TLS_CERTIFICATE)")
    var internalTlsCertificate: String? = Environment.value("VERIFICATION_INTERNAL_TLS_CERTIFICATE")
    @Option(help: "TLS private key (PEM) of the internal listener (env VERIFICATION_INTERNAL_TLS_KEY)")
    var internalTlsKey: String? = Environment.value("VERIFICATION_INTERNAL_TLS_KEY")
    @Option(help: "SHA-256 thumbprint of a client certificate allowed on the internal listener (mutual TLS); repeat for several (env VERIFICATION_INTERNAL_CLIENT_THUMBPRINTS, comma-separated)")
    var internalClientThumbprint: [String] = (Environment.value("VERIFICATION_INTERNAL_CLIENT_THUMBPRINTS") ?? "")
        .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    @Flag(help: "Trust X-Forwarded-For from a reverse proxy (env VERIFICATION_TRUST_PROXY=1)")
    var trustProxy = Environment.flag("VERIFICATION_TRUST_PROXY")

    func makeConfiguration() throws -> ServerConfiguration {
        var config = ServerConfiguration()
        config.host = try OptionParser.name(host, flag: "--host", env: "VERIFICATION_HOST")
        config.port = try OptionParser.integer(port, flag: "--port", env: "VERIFICATION_PORT", range: 1...65535)
        config.internalHost = try OptionParser.name(internalHost, flag: "--internal-host", env: "VERIFICATION_INTERNAL_HOST")
        config.internalPort = try OptionParser.integer(internalPort, flag: "--internal-port", env: "VERIFICATION_INTERNAL_PORT", range: 1...65535)
        if config.internalPort == config.port && config.internalHost == config.host {
            throw ConfigurationError(message: "--internal-port (VERIFICATION_INTERNAL_PORT): must differ from --port; the internal endpoints need their own listener")
        }
        config.database = try common.location()
        config.databasePoolSize = try OptionParser.integer(
            databasePoolSize, flag: "--database-pool-size", env: "VERIFICATION_DATABASE_POOL_SIZE", range: 2...256)
        config.secretFile = secretFile
        config.trustedPortalKeys = trustedPortalKey
        config.audience = try OptionParser.audience(audience, flag: "--audience", env: "VERIFICATION_AUDIENCE")
        for path in trustedPortalKey where !FileManager.default.isReadableFile(atPath: path) {
            throw ConfigurationError(message: "--trusted-portal-key (VERIFICATION_TRUSTED_PORTAL_KEYS): cannot read '\(path)'")
        }
        config.trustedRealms = try trustedIam.map { text in
            do { return try TrustedRealm.normalizedURL(text) } catch {
                throw ConfigurationError(message: "--trusted-iam (VERIFICATION_TRUSTED_IAM): \(String(describing: error))")
            }
        }
        config.teleTANsPerHour = try OptionParser.integer(teletansPerHour, flag: "--teletans-per-hour", env: "VERIFICATION_TELETANS_PER_HOUR", range: 1...100_000_000)
        config.trustProxy = trustProxy
        config.appTLS = try listenerTLS(
            certificate: tlsCertificate, key: tlsKey, thumbprints: [],
            flags: ("--tls-certificate (VERIFICATION_TLS_CERTIFICATE)", "--tls-key (VERIFICATION_TLS_KEY)"))
        // A variable that is set but lists nothing must not quietly turn mutual TLS into plain TLS.
        if internalClientThumbprint.isEmpty, Environment.value("VERIFICATION_INTERNAL_CLIENT_THUMBPRINTS") != nil {
            throw ConfigurationError(message: "--internal-client-thumbprint (VERIFICATION_INTERNAL_CLIENT_THUMBPRINTS): the variable is set but lists no thumbprint")
        }
        config.internalTLS = try listenerTLS(
            certificate: internalTlsCertificate, key: internalTlsKey, thumbprints: internalClientThumbprint,
            flags: ("--internal-tls-certificate (VERIFICATION_INTERNAL_TLS_CERTIFICATE)", "--internal-tls-key (VERIFICATION_INTERNAL_TLS_KEY)"))
        return config
    }

    /// nil without a certificate; the files are read now, so a bad one stops start-up.
    private func listenerTLS(certificate: String?, key: String?, thumbprints: [String], flags: (certificate: String, key: String)) throws -> ListenerTLS? {
        let thumbprintFlag = "--internal-client-thumbprint (VERIFICATION_INTERNAL_CLIENT_THUMBPRINTS)"
        var allowed = Set<String>()
        for text in thumbprints {
            guard let thumbprint = ListenerTLS.normalizedThumbprint(text) else {
                throw ConfigurationError(message: "\(thumbprintFlag): '\(text)' is not a SHA-256 thumbprint (64 hex digits, colons allowed)")
            }
            allowed.insert(thumbprint)
        }
        switch (certificate, key) {
        case (nil, nil):
            if !allowed.isEmpty {
                throw ConfigurationError(message: "\(thumbprintFlag): mutual TLS needs \(flags.certificate) and \(flags.key)")
            }
            return nil
        case (nil, _?):
            throw ConfigurationError(message: "\(flags.certificate): required together with \(flags.key)")
        case (_?, nil):
            throw ConfigurationError(message: "\(flags.key): required together with \(flags.certificate)")
        case let (certificate?, key?):
            let tls = ListenerTLS(certificateChainPath: certificate, privateKeyPath: key, allowedClientThumbprints: allowed)
            do {
                _ = try tls.serverBuilder()
            } catch let error as ListenerTLS.Failure {
                let flag = error.file == .privateKey ? flags.key : flags.certificate
                throw ConfigurationError(message: "\(flag): \(error.description)")
            }
            return tls
        }
    }

    func run() async throws {
        let config = try makeConfiguration()
        let logger = try common.makeLogger()
        let server: VerificationServerApp
        do {
            server = try await VerificationServerApp(configuration: config, logger: logger)
        } catch {
            throw CommandFailure(message: "cannot start: \(StartupError.describe(error))")
        }
        logger.info("verification server starting", metadata: [
            "app": "\(config.host):\(config.port)", "internal": "\(config.internalHost):\(config.internalPort)",
            "database": "\(config.database)", "trusted_portals": "\(config.trustedPortalKeys.count)", "audience": "\(config.audience)",
            "trusted_realms": "\(config.trustedRealms.joined(separator: ","))",
            "internal_tls": "\(config.internalTLS.map { $0.requiresClientCertificate ? "mutual" : "on" } ?? "off")",
        ])
        do {
            try await server.run()
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
        logger.info("verification server stopped")
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create or update the database tables, then exit.")

    @OptionGroup var common: CommonOptions

    @Flag(help: "List this release's migrations, applied (with the time) or pending, and change nothing")
    var status = false

    func run() async throws {
        let logger = try common.makeLogger()
        if status {
            try await MigrateCommand.status(location: try common.location(), migrations: VerificationServerApp.migrations, logger: logger)
        } else {
            try await MigrateCommand.run(location: try common.location(), migrations: VerificationServerApp.migrations, logger: logger)
        }
    }
}
