import Foundation
import NIOSSL
import PostgresKit

/// A `postgres://` URL read with libpq's meaning of `sslmode` and `sslrootcert`
/// (PostgreSQL's "SSL Support" chapter), so that a URL that works with psql works here.
/// PostgresKit's own parser checks the certificate and host name in every TLS mode, so
/// Debian's default cluster (TLS with a self-signed "snakeoil" certificate) fails with it.
/// Several hosts (`host1:port1,host2:port2`) and `target_session_attrs` as libpq reads them
/// ("Connection URIs" and "Specifying Multiple Hosts"): the way to a cluster's primary.
package struct PostgresURL: Sendable, Equatable {
    package struct Host: Sendable, Equatable {
        package let host: String
        package let port: Int

        package init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
    }

    /// Which server a connection must reach (libpq's `target_session_attrs`; PostgresNIO does not
    /// read it, ``PrimaryFinder`` does what it says).
    package enum TargetSessionAttributes: String, Sendable, CaseIterable {
        /// The first host that answers.
        case any
        /// A server that accepts writes: not a standby, not read-only by default.
        case readWrite = "read-write"
        /// A server that is not a standby.
        case primary
    }

    package enum SSLMode: String, Sendable, CaseIterable {
        case disable, allow, prefer, require
        case verifyCA = "verify-ca"
        case verifyFull = "verify-full"
    }

    /// Whose certificates the server's chain must end in.
    package enum TrustRoots: Sendable, Equatable {
        case system
        case file(String)
    }

    /// What is checked of the server's certificate when TLS is used.
    package enum Verification: Sendable, Equatable {
        case none
        case chain(TrustRoots)
        case chainAndHostName(TrustRoots)
    }

    package enum TLS: Sendable, Equatable {
        case disable
        /// TLS when the server offers it, plain otherwise.
        case prefer(Verification)
        case require(Verification)
    }

    /// In the URL's order; one unless the URL names a cluster.
    package let hosts: [Host]
    package let targetSessionAttributes: TargetSessionAttributes
    package let username: String
    package let password: String?
    package let database: String
    package let tls: TLS
    /// How long each host may take to accept a connection (libpq's `connect_timeout`, seconds).
    /// Without it: PostgresNIO's 10 s for one host; 3 s for each host of a cluster, so that a
    /// primary whose machine vanished (no answer at all, not a refusal) is passed over quickly.
    package let connectTimeout: Duration

    package var host: String { hosts[0].host }
    package var port: Int { hosts[0].port }

    private static let parameters = ["sslmode", "sslrootcert", "target_session_attrs", "connect_timeout"]
    private static let expected = "expected postgres://user:password@host:port/database"

    package init(_ text: String) throws {
        // URLComponents reads one host; the list is taken out and read host by host.
        let (single, hostList) = try Self.splitHosts(text)
        guard let components = URLComponents(string: single), ["postgres", "postgresql"].contains(components.scheme),
              let host = components.host, !host.isEmpty, let username = components.user, !username.isEmpty,
              components.path.count > 1 else {
            throw DatabaseLocation.ParseError(description: Self.expected)
        }
        var values: [String: String] = [:]
        for item in components.queryItems ?? [] {
            guard Self.parameters.contains(item.name) else {
                throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's parameter \"\(item.name)\" is not understood (only \(Self.parameters.dropLast().joined(separator: ", ")) and \(Self.parameters.last!))")
            }
            values[item.name] = item.value ?? ""
        }
        var hosts = [try Self.host(host, port: components.port)]
        if let hostList {
            hosts = try hostList.split(separator: ",", omittingEmptySubsequences: false).map { entry in
                guard let parsed = URLComponents(string: "postgres://h@\(entry)"), let name = parsed.host, !name.isEmpty else {
                    throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's host list \"\(hostList)\" has an empty host")
                }
                return try Self.host(name, port: parsed.port)
            }
        }
        let attributes = values["target_session_attrs"] ?? "any"
        guard let target = TargetSessionAttributes(rawValue: attributes) else {
            throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's target_session_attrs=\(attributes) is not one of \(TargetSessionAttributes.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        // libpq's default `any` takes the first host that answers, a standby too; the portal and
        // the verification server write, so a cluster's URL must ask for the primary.
        guard hosts.count == 1 || target != .any else {
            throw DatabaseLocation.ParseError(description: "the PostgreSQL URL names \(hosts.count) hosts but not target_session_attrs=read-write (or primary): the primary must be found among them, a standby cannot be written to")
        }
        if let timeout = values["connect_timeout"] {
            guard let seconds = Int(timeout), seconds >= 1, seconds <= 600 else {
                throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's connect_timeout=\(timeout) is not a number of seconds from 1 to 600")
            }
            self.connectTimeout = .seconds(seconds)
        } else {
            self.connectTimeout = .seconds(hosts.count > 1 ? 3 : 10)
        }
        self.hosts = hosts
        self.targetSessionAttributes = target
        self.username = username
        self.password = components.password
        self.database = String(components.path.dropFirst()).removingPercentEncoding ?? String(components.path.dropFirst())
        self.tls = try Self.tls(mode: values["sslmode"], rootCertificate: values["sslrootcert"])
    }

    /// The URL with its host list (`a:1,b:2`) replaced by its first host, and the list when there
    /// is more than one host.
    private static func splitHosts(_ text: String) throws -> (String, String?) {
        guard let schemeEnd = text.range(of: "://") else { return (text, nil) }
        let rest = text[schemeEnd.upperBound...]
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let hostStart = authority.lastIndex(of: "@").map { authority.index(after: $0) } ?? authority.startIndex
        let list = authority[hostStart...]
        guard list.contains(",") else { return (text, nil) }
        let first = list.split(separator: ",", omittingEmptySubsequences: false)[0]
        return (String(text[..<hostStart]) + first + String(text[authorityEnd...]), String(list))
    }

    private static func host(_ name: String, port: Int?) throws -> Host {
        let port = port ?? 5432
        guard (1...65535).contains(port) else {
            throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's port \(port) is not between 1 and 65535")
        }
        // URLComponents keeps an IPv6 address's brackets; the driver wants the address alone.
        let bare = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        return Host(host: bare, port: port)
    }

    /// libpq: without sslmode, prefer; `require` with a root certificate file checks the chain like
    /// verify-ca, and so does every other TLS mode given one; `sslrootcert=system` (libpq 16) is the
    /// system's trust store and allows verify-full only. verify-ca and verify-full without
    /// sslrootcert use the system's trust store too (libpq would look for ~/.postgresql/root.crt,
    /// which a service user does not have). `allow` (plain first, then TLS) is taken as prefer:
    /// PostgresNIO cannot try plain first.
    private static func tls(mode text: String?, rootCertificate: String?) throws -> TLS {
        let roots: TrustRoots? = switch rootCertificate {
        case nil, "": nil
        case "system": .system
        case let path?: .file(path)
        }
        let mode: SSLMode
        if let text {
            guard let parsed = SSLMode(rawValue: text) else {
                throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's sslmode=\(text) is not one of \(SSLMode.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            mode = parsed
        } else {
            mode = roots == .system ? .verifyFull : .prefer
        }
        if roots == .system, mode != .verifyFull {
            throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's sslrootcert=system needs sslmode=verify-full (as in libpq), not \(mode.rawValue)")
        }
        let checked: Verification = roots.map { .chain($0) } ?? .none
        switch mode {
        case .disable: return .disable
        case .allow, .prefer: return .prefer(checked)
        case .require: return .require(checked)
        case .verifyCA: return .require(.chain(roots ?? .system))
        case .verifyFull: return .require(.chainAndHostName(roots ?? .system))
        }
    }

    /// The driver's configuration. `systemTrustStore`: where the system's trust store is looked
    /// for (NIOSSL's places on Debian); a check that names it when it is missing, because NIOSSL
    /// then fails with an error that does not.
    /// One driver configuration per host, in the URL's order.
    package func configurations(systemTrustStore: [String] = ["/etc/ssl/certs/ca-certificates.crt", "/etc/ssl/certs"]) throws -> [SQLPostgresConfiguration] {
        let connectionTLS: PostgresConnection.Configuration.TLS
        switch tls {
        case .disable: connectionTLS = .disable
        case .prefer(let verification): connectionTLS = .prefer(try context(verification, systemTrustStore: systemTrustStore))
        case .require(let verification): connectionTLS = .require(try context(verification, systemTrustStore: systemTrustStore))
        }
        return hosts.map { server in
            var configuration = SQLPostgresConfiguration(hostname: server.host, port: server.port, username: username,
                                                         password: password, database: database, tls: connectionTLS)
            configuration.coreConfiguration.options.connectTimeout = .seconds(connectTimeout.components.seconds)
            return configuration
        }
    }

    private func context(_ verification: Verification, systemTrustStore: [String]) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        let roots: TrustRoots?
        switch verification {
        case .none:
            configuration.certificateVerification = .none
            roots = nil
        case .chain(let trusted):
            configuration.certificateVerification = .noHostnameVerification
            roots = trusted
        case .chainAndHostName(let trusted):
            configuration.certificateVerification = .fullVerification
            roots = trusted
        }
        switch roots {
        case nil:
            break
        case .system:
            guard systemTrustStore.contains(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw DatabaseLocation.ParseError(description: "the PostgreSQL URL asks to check the server's certificate against the system's trust store, but \(systemTrustStore.joined(separator: " and ")) do not exist: install the package ca-certificates, or name the server's CA with sslrootcert=FILE")
            }
            configuration.trustRoots = .default
        case .file(let path):
            guard FileManager.default.isReadableFile(atPath: path) else {
                throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's sslrootcert=\(path) cannot be read (missing, or not readable by this user)")
            }
            configuration.trustRoots = .file(path)
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw DatabaseLocation.ParseError(description: "the PostgreSQL URL's TLS settings do not work: \(error)")
        }
    }
}
