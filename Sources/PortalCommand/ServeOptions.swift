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

/// Options shared by `serve` and `migrate`.
struct DatabaseOptions: ParsableArguments {
    @Option(help: "sqlite:PATH or postgres://user:password@host:port/database[?sslmode=MODE], sslmode and sslrootcert as in libpq (env PORTAL_DATABASE)")
    var database: String = Environment.value("PORTAL_DATABASE") ?? "sqlite:portal.sqlite"

    @Option(help: "Log level: trace, debug, info, notice, warning, error (env PORTAL_LOG_LEVEL)")
    var logLevel: String = Environment.value("PORTAL_LOG_LEVEL") ?? "info"

    func location() throws -> DatabaseLocation {
        try OptionParser.database(database, env: "PORTAL_DATABASE")
    }

    func makeLogger() throws -> Logger {
        try OptionParser.logger(label: "teletan-portal", level: logLevel, env: "PORTAL_LOG_LEVEL")
    }
}

/// Every flag and environment variable of `serve`; `check-config` reads the same ones.
struct ServeOptions: ParsableArguments {
    @OptionGroup var storage: DatabaseOptions

    @Option(help: "PostgreSQL connections per instance (env PORTAL_DATABASE_POOL_SIZE)")
    var databasePoolSize: String = Environment.value("PORTAL_DATABASE_POOL_SIZE") ?? "16"
    @Option(help: "Address to listen on (env PORTAL_HOST)")
    var host: String = Environment.value("PORTAL_HOST") ?? "127.0.0.1"
    @Option(help: "Port to listen on (env PORTAL_PORT)")
    var port: String = Environment.value("PORTAL_PORT") ?? "8080"
    @Option(help: "Address of the metrics listener, GET /metrics for Prometheus (env PORTAL_METRICS_HOST)")
    var metricsHost: String = Environment.value("PORTAL_METRICS_HOST") ?? "127.0.0.1"
    @Option(help: "Port of the metrics listener (env PORTAL_METRICS_PORT)")
    var metricsPort: String = Environment.value("PORTAL_METRICS_PORT") ?? "9464"
    @Option(help: "After SIGTERM, how long to keep serving with /health/ready answering 503 before the listeners close, 0s to 60s (env PORTAL_SHUTDOWN_DRAIN)")
    var shutdownDrain: String = Environment.value("PORTAL_SHUTDOWN_DRAIN") ?? "5s"
    @Option(help: "PAM service name, a file in /etc/pam.d (env PORTAL_PAM_SERVICE)")
    var pamService: String = Environment.value("PORTAL_PAM_SERVICE") ?? "teletan-portal"
    @Option(help: "Threads for PAM, and most sign-ins in progress at once (env PORTAL_PAM_THREADS)")
    var pamThreads: String = Environment.value("PORTAL_PAM_THREADS") ?? "16"
    @Option(help: "Longest wait for PAM's answer to a password or code, 1s to 300s (env PORTAL_PAM_TIMEOUT)")
    var pamTimeout: String = Environment.value("PORTAL_PAM_TIMEOUT") ?? "20s"
    @Option(help: "Server secret file, created with mode 600 if missing (env PORTAL_SECRET_FILE)")
    var secretFile: String = Environment.value("PORTAL_SECRET_FILE") ?? "portal.secret"

    @Option(help: "Unix group of officers (env PORTAL_OFFICER_GROUP)")
    var officerGroup: String = Environment.value("PORTAL_OFFICER_GROUP") ?? "teletan-officer"
    @Option(help: "Unix group of hotline staff (env PORTAL_HOTLINE_GROUP)")
    var hotlineGroup: String = Environment.value("PORTAL_HOTLINE_GROUP") ?? "teletan-hotline"
    @Option(help: "Unix group allowed EVENT teleTANs (env PORTAL_EVENT_GROUP)")
    var eventGroup: String = Environment.value("PORTAL_EVENT_GROUP") ?? "teletan-event"
    @Option(help: "Unix group of administrators (env PORTAL_ADMIN_GROUP)")
    var adminGroup: String = Environment.value("PORTAL_ADMIN_GROUP") ?? "teletan-admin"

    @Option(help: "Session idle timeout, e.g. 15m (env PORTAL_IDLE_TIMEOUT)")
    var idleTimeout: String = Environment.value("PORTAL_IDLE_TIMEOUT") ?? "15m"
    @Option(help: "Absolute session lifetime, e.g. 8h (env PORTAL_SESSION_LIFETIME)")
    var sessionLifetime: String = Environment.value("PORTAL_SESSION_LIFETIME") ?? "8h"
    @Option(help: "Failed sign-ins per username before it is locked (env PORTAL_SIGNIN_FAILURES_PER_USER)")
    var signinFailuresPerUser: String = Environment.value("PORTAL_SIGNIN_FAILURES_PER_USER") ?? "5"
    @Option(help: "Failed sign-ins per client address before it is locked (env PORTAL_SIGNIN_FAILURES_PER_ADDRESS)")
    var signinFailuresPerAddress: String = Environment.value("PORTAL_SIGNIN_FAILURES_PER_ADDRESS") ?? "50"
    @Option(help: "Window in which failed sign-ins are counted (env PORTAL_SIGNIN_WINDOW)")
    var signinWindow: String = Environment.value("PORTAL_SIGNIN_WINDOW") ?? "15m"
    @Option(help: "How long a locked username or address is refused (env PORTAL_SIGNIN_LOCKOUT)")
    var signinLockout: String = Environment.value("PORTAL_SIGNIN_LOCKOUT") ?? "15m"
    @Option(help: "Least time a failed sign-in takes, plus up to a fifth more at random, so that it does not tell whether the account exists; 0s (tests only) switches it off (env PORTAL_SIGNIN_FAILURE_TIME)")
    var signinFailureTime: String = Environment.value("PORTAL_SIGNIN_FAILURE_TIME") ?? "1s"

    @Option(help: "Minimum time between two teleTANs of one user; 0s switches it off (env PORTAL_TELETAN_INTERVAL)")
    var teletanInterval: String = Environment.value("PORTAL_TELETAN_INTERVAL") ?? "30s"
    @Option(help: "teleTANs per user per day (env PORTAL_TELETANS_PER_USER_PER_DAY)")
    var teletansPerUserPerDay: String = Environment.value("PORTAL_TELETANS_PER_USER_PER_DAY") ?? "100"
    @Option(help: "teleTANs per rolling hour for the whole service (env PORTAL_TELETANS_PER_HOUR)")
    var teletansPerHour: String = Environment.value("PORTAL_TELETANS_PER_HOUR") ?? "1000"
    @Option(help: "How long a teleTAN stays on screen (env PORTAL_TELETAN_DISPLAY_TIME)")
    var teletanDisplayTime: String = Environment.value("PORTAL_TELETAN_DISPLAY_TIME") ?? "10m"

    @Option(help: "'embedded', or the base URL of a CWA-compatible verification server's internal listener (env PORTAL_VERIFICATION_SERVER)")
    var verificationServer: String = Environment.value("PORTAL_VERIFICATION_SERVER") ?? "embedded"
    @Option(help: "Token format for the verification server: 'portal' (this project's ES256 tokens) or 'cwa' (RS256 tokens as CWA's Keycloak issued them, for CWA's own verification server) (env PORTAL_VERIFICATION_AUTH)")
    var verificationAuth: String = Environment.value("PORTAL_VERIFICATION_AUTH") ?? "portal"
    @Option(help: "Private key (from `portal keygen`) that signs requests to the verification server; default portal-key.pem, or cwa-key.pem (RSA, at least 3072 bits) with --verification-auth cwa (env PORTAL_VERIFICATION_KEY)")
    var verificationKey: String? = Environment.value("PORTAL_VERIFICATION_KEY")
    @Option(help: "With --verification-auth cwa: the X.509 certificate (PEM) of --verification-key, published for the verification server on the metrics listener; default cwa-certificate.pem (env PORTAL_VERIFICATION_CERTIFICATE)")
    var verificationCertificate: String? = Environment.value("PORTAL_VERIFICATION_CERTIFICATE")
    @Option(help: "With --verification-auth portal: the audience (aud) the tokens name, the verification server's --audience; default teletan-verification-server, the server's default (env PORTAL_VERIFICATION_AUDIENCE)")
    var verificationAudience: String? = Environment.value("PORTAL_VERIFICATION_AUDIENCE")
    @Option(help: "Longest wait for the verification server (env PORTAL_VERIFICATION_TIMEOUT)")
    var verificationTimeout: String = Environment.value("PORTAL_VERIFICATION_TIMEOUT") ?? "5s"
    @Option(help: "Client certificate (PEM) for a verification server that requires mutual TLS (env PORTAL_VERIFICATION_CLIENT_CERTIFICATE)")
    var verificationClientCertificate: String? = Environment.value("PORTAL_VERIFICATION_CLIENT_CERTIFICATE")
    @Option(help: "Private key (PEM) of that client certificate (env PORTAL_VERIFICATION_CLIENT_KEY)")
    var verificationClientKey: String? = Environment.value("PORTAL_VERIFICATION_CLIENT_KEY")
    @Option(help: "CA certificates (PEM) to trust for an https verification server instead of the system's (env PORTAL_VERIFICATION_CA)")
    var verificationCa: String? = Environment.value("PORTAL_VERIFICATION_CA")

    @Option(help: "The URL browsers reach the portal under, e.g. https://teletan.example.org; other Host names get 421 (env PORTAL_PUBLIC_URL; default: http://HOST:PORT of this listener)")
    var publicUrl: String? = Environment.value("PORTAL_PUBLIC_URL")
    @Option(help: "The authority's time zone, in which pages show times, e.g. Europe/Berlin (env PORTAL_TIME_ZONE)")
    var timeZone: String = Environment.value("PORTAL_TIME_ZONE") ?? "Europe/Berlin"

    @Option(help: "CSV file of the health authorities that may ask for EVENT teleTANs: id,name per line (env PORTAL_HEALTH_AUTHORITIES; see docs/health-authorities.example.csv)")
    var healthAuthorities: String? = Environment.value("PORTAL_HEALTH_AUTHORITIES")
    @Option(help: "'none', or 'two-person': an EVENT teleTAN needs a second event officer's approval (env PORTAL_EVENT_APPROVAL)")
    var eventApproval: String = Environment.value("PORTAL_EVENT_APPROVAL") ?? "none"
    @Option(help: "JSON file of the hotline call's checks (env PORTAL_HOTLINE_CHECKS; see docs/hotline-checks.example.json)")
    var hotlineChecks: String? = Environment.value("PORTAL_HOTLINE_CHECKS")
    @Option(help: "Longest time a callback's phone number and name are kept, e.g. 1h (env PORTAL_CALLBACK_RETENTION)")
    var callbackRetention: String = Environment.value("PORTAL_CALLBACK_RETENTION") ?? "1h"
    @Option(help: "Numbers the hotline calls back, comma-separated: a region (DE: its fixed-line and mobile numbers), a region with types (AT:fixed-line+mobile+toll-free), or an E.164 prefix of any type (+4980012) (env PORTAL_CALLBACK_NUMBERS; see docs/configuration.md)")
    var callbackNumbers: String = Environment.value("PORTAL_CALLBACK_NUMBERS") ?? "DE"

    @OptionGroup var dailyQuota: DailyQuotaOptions
    @OptionGroup var auditKey: AuditCheckpointKeyOption
    @OptionGroup var auditSchedule: AuditScheduleOptions

    // The flag starts false and the variable is read beside it: ArgumentParser's debug builds
    // refuse a flag whose initial value is true (PORTAL_TRUST_PROXY=1 in portal.env).
    @Flag(name: .customLong("trust-proxy"), help: "Trust X-Forwarded-For/-Proto from a reverse proxy (env PORTAL_TRUST_PROXY=1)")
    var trustProxyFlag = false
    var trustProxy: Bool { trustProxyFlag || Environment.flag("PORTAL_TRUST_PROXY") }
    @Option(help: "Directory of HTML templates to use instead of the built-in ones (env PORTAL_TEMPLATES)")
    var templates: String? = Environment.value("PORTAL_TEMPLATES")
    @Option(help: "Directory of static files to use instead of the built-in ones (env PORTAL_PUBLIC)")
    var publicDirectory: String? = Environment.value("PORTAL_PUBLIC")

    func makeConfiguration() throws -> PortalConfiguration {
        let problems = ConfigurationProblems()
        let config = makeConfiguration(problems: problems)
        try problems.throwFirst()
        return config
    }

    /// The configuration the flags describe; every flag that cannot be used is recorded in
    /// `problems` (its default stays in place so the other checks can go on).
    func makeConfiguration(problems: ConfigurationProblems) -> PortalConfiguration {
        var config = PortalConfiguration()
        problems.set(&config.host) { try OptionParser.name(host, flag: "--host", env: "PORTAL_HOST") }
        problems.set(&config.port) { try OptionParser.integer(port, flag: "--port", env: "PORTAL_PORT", range: 1...65535) }
        problems.set(&config.metricsHost) { try OptionParser.name(metricsHost, flag: "--metrics-host", env: "PORTAL_METRICS_HOST") }
        problems.set(&config.metricsPort) {
            try OptionParser.integer(metricsPort, flag: "--metrics-port", env: "PORTAL_METRICS_PORT", range: 1...65535)
        }
        if config.metricsPort == config.port {
            problems.add("--metrics-port (PORTAL_METRICS_PORT): must differ from --port")
        }
        problems.set(&config.shutdownDrain) {
            let drain = try OptionParser.duration(shutdownDrain, flag: "--shutdown-drain", env: "PORTAL_SHUTDOWN_DRAIN", allowZero: true)
            guard drain <= .seconds(60) else {
                throw ConfigurationError(message: "--shutdown-drain (PORTAL_SHUTDOWN_DRAIN): at most 60s, got '\(shutdownDrain)'")
            }
            return drain
        }
        problems.set(&config.database) { try storage.location() }
        problems.set(&config.databasePoolSize) {
            try OptionParser.integer(databasePoolSize, flag: "--database-pool-size", env: "PORTAL_DATABASE_POOL_SIZE", range: 2...256)
        }
        problems.set(&config.pamService) { try OptionParser.name(pamService, flag: "--pam-service", env: "PORTAL_PAM_SERVICE") }
        problems.set(&config.pamThreads) { try OptionParser.integer(pamThreads, flag: "--pam-threads", env: "PORTAL_PAM_THREADS", range: 1...256) }
        problems.set(&config.pamTimeout) {
            let timeout = try OptionParser.duration(pamTimeout, flag: "--pam-timeout", env: "PORTAL_PAM_TIMEOUT")
            guard timeout <= .seconds(300) else {
                throw ConfigurationError(message: "--pam-timeout (PORTAL_PAM_TIMEOUT): at most 300s, got '\(pamTimeout)'")
            }
            return timeout
        }
        config.secretFile = secretFile
        problems.set(&config.roleGroups.officer) { try OptionParser.name(officerGroup, flag: "--officer-group", env: "PORTAL_OFFICER_GROUP") }
        problems.set(&config.roleGroups.hotline) { try OptionParser.name(hotlineGroup, flag: "--hotline-group", env: "PORTAL_HOTLINE_GROUP") }
        problems.set(&config.roleGroups.event) { try OptionParser.name(eventGroup, flag: "--event-group", env: "PORTAL_EVENT_GROUP") }
        problems.set(&config.roleGroups.admin) { try OptionParser.name(adminGroup, flag: "--admin-group", env: "PORTAL_ADMIN_GROUP") }
        problems.set(&config.idleTimeout) { try OptionParser.duration(idleTimeout, flag: "--idle-timeout", env: "PORTAL_IDLE_TIMEOUT") }
        problems.set(&config.sessionLifetime) {
            try OptionParser.duration(sessionLifetime, flag: "--session-lifetime", env: "PORTAL_SESSION_LIFETIME")
        }
        problems.set(&config.signInFailuresPerUser) {
            try OptionParser.integer(signinFailuresPerUser, flag: "--signin-failures-per-user", env: "PORTAL_SIGNIN_FAILURES_PER_USER", range: 1...1000)
        }
        problems.set(&config.signInFailuresPerAddress) {
            try OptionParser.integer(
                signinFailuresPerAddress, flag: "--signin-failures-per-address", env: "PORTAL_SIGNIN_FAILURES_PER_ADDRESS", range: 1...100_000)
        }
        problems.set(&config.signInWindow) { try OptionParser.duration(signinWindow, flag: "--signin-window", env: "PORTAL_SIGNIN_WINDOW") }
        problems.set(&config.signInLockout) { try OptionParser.duration(signinLockout, flag: "--signin-lockout", env: "PORTAL_SIGNIN_LOCKOUT") }
        problems.set(&config.signInFailureTime) {
            let time = try OptionParser.duration(signinFailureTime, flag: "--signin-failure-time", env: "PORTAL_SIGNIN_FAILURE_TIME", allowZero: true)
            guard time <= .seconds(30) else {
                throw ConfigurationError(message: "--signin-failure-time (PORTAL_SIGNIN_FAILURE_TIME): at most 30s, got '\(signinFailureTime)'")
            }
            return time
        }
        problems.set(&config.teleTANMinimumInterval) {
            try OptionParser.duration(teletanInterval, flag: "--teletan-interval", env: "PORTAL_TELETAN_INTERVAL", allowZero: true)
        }
        problems.set(&config.teleTANsPerUserPerDay) {
            try OptionParser.integer(
                teletansPerUserPerDay, flag: "--teletans-per-user-per-day", env: "PORTAL_TELETANS_PER_USER_PER_DAY", range: 1...10_000_000)
        }
        problems.set(&config.teleTANsPerHourGlobal) {
            try OptionParser.integer(teletansPerHour, flag: "--teletans-per-hour", env: "PORTAL_TELETANS_PER_HOUR", range: 1...100_000_000)
        }
        problems.set(&config.teleTANDisplayTime) {
            try OptionParser.duration(teletanDisplayTime, flag: "--teletan-display-time", env: "PORTAL_TELETAN_DISPLAY_TIME")
        }
        config.trustProxy = trustProxy
        if let publicUrl {
            if PublicOrigin(publicUrl) == nil {
                problems.add("--public-url (PORTAL_PUBLIC_URL): expected http(s)://host[:port] without a path, got '\(publicUrl)'")
            } else {
                config.publicURL = publicUrl
            }
        } else if ["0.0.0.0", "::", "[::]"].contains(config.host) {
            problems.add("--public-url (PORTAL_PUBLIC_URL): needed when --host listens on every address (\(config.host))")
        } else if PortalConfiguration.listenerOrigin(host: config.host, port: config.port) == nil {
            problems.add("--public-url (PORTAL_PUBLIC_URL): needed, http://\(config.host):\(config.port) is no URL")
        }
        if let zone = TimeZone(identifier: timeZone) {
            config.timeZone = zone
        } else {
            problems.add("--time-zone (PORTAL_TIME_ZONE): unknown time zone '\(timeZone)' (expected an IANA name such as Europe/Berlin)")
        }
        if let healthAuthorities {
            problems.set(&config.healthAuthorities) {
                do {
                    return try HealthAuthorities.load(path: healthAuthorities)
                } catch {
                    throw ConfigurationError(message: "--health-authorities (PORTAL_HEALTH_AUTHORITIES): \(error)")
                }
            }
        }
        switch eventApproval {
        case "none": config.eventApprovalByTwo = false
        case "two-person": config.eventApprovalByTwo = true
        default: problems.add("--event-approval (PORTAL_EVENT_APPROVAL): expected none or two-person, got '\(eventApproval)'")
        }
        if let hotlineChecks {
            problems.set(&config.hotlineChecks) {
                do {
                    return try HotlineChecks.load(path: hotlineChecks)
                } catch {
                    throw ConfigurationError(message: "--hotline-checks (PORTAL_HOTLINE_CHECKS): \(error)")
                }
            }
        }
        problems.set(&config.callbackRetention) {
            try OptionParser.duration(callbackRetention, flag: "--callback-retention", env: "PORTAL_CALLBACK_RETENTION")
        }
        problems.set(&config.callbackNumbers) {
            do {
                return try CallbackNumberPolicy(parsing: callbackNumbers)
            } catch {
                throw ConfigurationError(message: "--callback-numbers (PORTAL_CALLBACK_NUMBERS): \(error)")
            }
        }
        config.dailyQuota = dailyQuota.settings(problems: problems)
        config.auditCheckpointKey = auditKey.auditCheckpointKey
        problems.set(&config.auditCheckpointInterval) { try auditSchedule.checkpointInterval() }
        problems.set(&config.auditFullCheckInterval) { try auditSchedule.fullCheckInterval() }
        problems.set(&config.auditRetention) { try auditSchedule.retention() }
        config.templatesDirectory = templates
        config.publicDirectory = publicDirectory
        for case let (directory?, flag, env) in [(templates, "--templates", "PORTAL_TEMPLATES"), (publicDirectory, "--public-directory", "PORTAL_PUBLIC")] {
            var isDirectory: ObjCBool = false
            if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
                problems.add("\(flag) (\(env)): directory '\(directory)' does not exist")
            }
        }
        return config
    }

    /// nil for the embedded service; otherwise the HTTP client for the configured server, and
    /// with `--verification-auth cwa` the certs document the metrics listener publishes.
    func makeRemoteService(logger: Logger) async throws -> (service: RemoteVerificationService, certs: CertsRoute?)? {
        guard ["portal", "cwa"].contains(verificationAuth) else {
            throw ConfigurationError(message: "--verification-auth (PORTAL_VERIFICATION_AUTH): expected portal or cwa, got '\(verificationAuth)'")
        }
        if verificationAuth == "portal", verificationCertificate != nil {
            throw ConfigurationError(message: "--verification-certificate (PORTAL_VERIFICATION_CERTIFICATE): only used with --verification-auth cwa")
        }
        // CWA's tokens carry no audience (its server does not read one).
        if verificationAuth == "cwa", verificationAudience != nil {
            throw ConfigurationError(message: "--verification-audience (PORTAL_VERIFICATION_AUDIENCE): only used with --verification-auth portal")
        }
        guard verificationServer != "embedded" else {
            if verificationAuth == "cwa" {
                throw ConfigurationError(message: "--verification-auth (PORTAL_VERIFICATION_AUTH): cwa needs a remote --verification-server URL, not 'embedded'")
            }
            return nil
        }
        guard let url = URL(string: verificationServer), ["http", "https"].contains(url.scheme ?? ""), url.host != nil else {
            throw ConfigurationError(message: "--verification-server (PORTAL_VERIFICATION_SERVER): expected 'embedded' or an http(s) URL, got '\(verificationServer)'")
        }
        let timeout = try OptionParser.duration(verificationTimeout, flag: "--verification-timeout", env: "PORTAL_VERIFICATION_TIMEOUT")
        if url.scheme == "http", verificationClientCertificate != nil || verificationClientKey != nil || verificationCa != nil {
            throw ConfigurationError(message: "--verification-server (PORTAL_VERIFICATION_SERVER): client certificate and CA settings need an https URL, got '\(verificationServer)'")
        }
        let tls: TLSConfiguration?
        do {
            tls = try VerificationClientTLS.configuration(certificate: verificationClientCertificate, privateKey: verificationClientKey, trustRoots: verificationCa)
        } catch let error as VerificationClientTLS.Failure {
            let flag = switch error.setting {
            case .certificate: "--verification-client-certificate (PORTAL_VERIFICATION_CLIENT_CERTIFICATE)"
            case .privateKey: "--verification-client-key (PORTAL_VERIFICATION_CLIENT_KEY)"
            case .trustRoots: "--verification-ca (PORTAL_VERIFICATION_CA)"
            }
            throw ConfigurationError(message: "\(flag): \(error.description)")
        }
        let (signer, certs) = try await makeSigner()
        return (RemoteVerificationService(baseURL: verificationServer, signer: signer, timeout: timeout, tls: tls, logger: logger), certs)
    }

    /// The token signer of `--verification-auth`, and for `cwa` the certs document to publish.
    private func makeSigner() async throws -> (any VerificationAuth, CertsRoute?) {
        let keyFlag = "--verification-key (PORTAL_VERIFICATION_KEY)"
        guard verificationAuth == "cwa" else {
            do {
                let audience = try verificationAudience.map {
                    try OptionParser.audience($0, flag: "--verification-audience", env: "PORTAL_VERIFICATION_AUDIENCE")
                } ?? PortalTokenPayload.defaultAudience
                return (try await PortalTokenSigner(privateKeyPath: verificationKey ?? PortalKeys.privateKeyFile, audience: audience), nil)
            } catch let error as PortalKeys.Failure {
                throw ConfigurationError(message: "\(keyFlag): \(error.description)")
            }
        }
        do {
            let key = try CWASigningKey.load(keyPath: verificationKey ?? CWASigningKey.privateKeyFile,
                                             certificatePath: verificationCertificate ?? CWASigningKey.certificateFile)
            return (await CWATokenSigner(key: key), CertsRoute(document: try CertsDocument.json(for: key)))
        } catch let error as CWASigningKey.Failure {
            let flag = error.setting == .key ? keyFlag : "--verification-certificate (PORTAL_VERIFICATION_CERTIFICATE)"
            throw ConfigurationError(message: "\(flag): \(error.description)")
        }
    }
}

