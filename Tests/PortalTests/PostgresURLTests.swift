import Storage
import XCTest

/// `sslmode` and `sslrootcert` as libpq reads them (PostgresURL); the connections themselves, with
/// psql as the oracle, are Tests/faults/test_postgres_tls.py.
final class PostgresURLTests: XCTestCase {
    private let base = "postgres://teletan:S3cret-Pass@db.example.org:5433/teletan"

    private func tls(_ query: String) throws -> PostgresURL.TLS {
        try PostgresURL(base + query).tls
    }

    func testEverySSLModeMeansWhatItMeansToLibpq() throws {
        XCTAssertEqual(try tls(""), .prefer(.none), "libpq's default is prefer, without a certificate check")
        XCTAssertEqual(try tls("?sslmode=disable"), .disable)
        XCTAssertEqual(try tls("?sslmode=allow"), .prefer(.none))
        XCTAssertEqual(try tls("?sslmode=prefer"), .prefer(.none))
        XCTAssertEqual(try tls("?sslmode=require"), .require(.none), "require does not check the certificate")
        XCTAssertEqual(try tls("?sslmode=verify-ca"), .require(.chain(.system)))
        XCTAssertEqual(try tls("?sslmode=verify-full"), .require(.chainAndHostName(.system)))
        // A root certificate file: require checks the chain as verify-ca does (libpq).
        XCTAssertEqual(try tls("?sslmode=require&sslrootcert=/etc/ca.pem"), .require(.chain(.file("/etc/ca.pem"))))
        XCTAssertEqual(try tls("?sslmode=verify-ca&sslrootcert=/etc/ca.pem"), .require(.chain(.file("/etc/ca.pem"))))
        XCTAssertEqual(try tls("?sslmode=verify-full&sslrootcert=/etc/ca.pem"), .require(.chainAndHostName(.file("/etc/ca.pem"))))
        XCTAssertEqual(try tls("?sslrootcert=/etc/ca.pem"), .prefer(.chain(.file("/etc/ca.pem"))))
        // sslrootcert=system (libpq 16): the system's store, verify-full by default and only.
        XCTAssertEqual(try tls("?sslrootcert=system"), .require(.chainAndHostName(.system)))
        XCTAssertEqual(try tls("?sslrootcert=system&sslmode=verify-full"), .require(.chainAndHostName(.system)))
    }

    func testTheRestOfTheURL() throws {
        let url = try PostgresURL("postgresql://teletan_portal:p%40ss%3Aword@127.0.0.1/teletan")
        XCTAssertEqual(url.host, "127.0.0.1")
        XCTAssertEqual(url.port, 5432)
        XCTAssertEqual(url.username, "teletan_portal")
        XCTAssertEqual(url.password, "p@ss:word")
        XCTAssertEqual(url.database, "teletan")
    }

    /// A cluster's URL (docs/deployment.md, the PostgreSQL cluster): several hosts, tried in order,
    /// and libpq's target_session_attrs.
    func testSeveralHostsAndTheSessionTheyMustGive() throws {
        let url = try PostgresURL("postgres://teletan:S3cret-Pass@127.0.0.1:5441,[::1],db2.example.org:5442/teletan?target_session_attrs=read-write&sslmode=disable")
        XCTAssertEqual(url.hosts, [.init(host: "127.0.0.1", port: 5441), .init(host: "::1", port: 5432), .init(host: "db2.example.org", port: 5442)])
        XCTAssertEqual(url.targetSessionAttributes, .readWrite)
        XCTAssertEqual(url.username, "teletan")
        XCTAssertEqual(url.password, "S3cret-Pass")
        XCTAssertEqual(url.database, "teletan")
        XCTAssertEqual(url.tls, .disable)
        XCTAssertEqual(try url.configurations().count, 3)
        XCTAssertEqual(try PostgresURL(base).targetSessionAttributes, .any, "libpq's default")
        XCTAssertEqual("\(try DatabaseLocation(parsing: "postgres://teletan:S3cret-Pass@a:5441,b:5442/teletan?target_session_attrs=read-write"))",
                       "postgres://teletan:***@a:5441,b:5442/teletan?target_session_attrs=read-write")
        XCTAssertEqual(try PostgresURL(base + "?target_session_attrs=primary").targetSessionAttributes, .primary)
        XCTAssertThrowsError(try PostgresURL("postgres://teletan:S3cret-Pass@a:5432,:5433/teletan?target_session_attrs=read-write")) { error in
            XCTAssertEqual("\(error)", "the PostgreSQL URL's host list \"a:5432,:5433\" has an empty host")
        }
        // Several hosts with libpq's default would take whichever answers first, a standby too.
        for query in ["", "?target_session_attrs=any"] {
            XCTAssertThrowsError(try PostgresURL("postgres://teletan:S3cret-Pass@a:5432,b:5432/teletan" + query)) { error in
                XCTAssertEqual("\(error)", "the PostgreSQL URL names 2 hosts but not target_session_attrs=read-write (or primary): the primary must be found among them, a standby cannot be written to")
            }
        }
    }

    /// A host that does not answer at all is given up after the connect timeout: 3 s for each host
    /// of a cluster unless the URL says otherwise (libpq's connect_timeout), PostgresNIO's 10 s
    /// for a single host.
    func testTheConnectTimeoutOfEachHost() throws {
        let cluster = try PostgresURL("postgres://teletan:S3cret-Pass@a:5432,b:5432/teletan?target_session_attrs=read-write")
        XCTAssertEqual(cluster.connectTimeout, .seconds(3))
        XCTAssertEqual(try cluster.configurations().map(\.coreConfiguration.options.connectTimeout), [.seconds(3), .seconds(3)])
        XCTAssertEqual(try PostgresURL(base).connectTimeout, .seconds(10))
        XCTAssertEqual(try PostgresURL(base + "?connect_timeout=5").configurations().first?.coreConfiguration.options.connectTimeout, .seconds(5))
        XCTAssertThrowsError(try PostgresURL(base + "?connect_timeout=0")) { error in
            XCTAssertEqual("\(error)", "the PostgreSQL URL's connect_timeout=0 is not a number of seconds from 1 to 600")
        }
    }

    func testWrongSettingsAreNamedWithoutThePassword() {
        let cases = [
            ("?sslmode=verify_full", "sslmode=verify_full is not one of disable, allow, prefer, require, verify-ca, verify-full"),
            ("?tlsmode=require", "parameter \"tlsmode\" is not understood (only sslmode, sslrootcert, target_session_attrs and connect_timeout)"),
            ("?sslmode=require&sslrootcert=system", "sslrootcert=system needs sslmode=verify-full (as in libpq), not require"),
            ("?target_session_attrs=standby", "target_session_attrs=standby is not one of any, read-write, primary"),
        ]
        XCTAssertThrowsError(try DatabaseLocation(parsing: "postgres://teletan:S3cret-Pass@db.example.org:99999/teletan")) { error in
            XCTAssertEqual("\(error)", "the PostgreSQL URL's port 99999 is not between 1 and 65535")
        }
        for (query, expected) in cases {
            XCTAssertThrowsError(try DatabaseLocation(parsing: base + query), query) { error in
                XCTAssertTrue("\(error)".contains(expected), "\(query): \(error)")
                XCTAssertFalse("\(error)".contains("S3cret"), "\(query): \(error)")
            }
        }
    }

    func testAMissingTrustStoreIsNamed() throws {
        let url = try PostgresURL(base + "?sslmode=verify-full")
        XCTAssertThrowsError(try url.configurations(systemTrustStore: ["/nonexistent/ca-certificates.crt", "/nonexistent/certs"])) { error in
            XCTAssertEqual("\(error)", "the PostgreSQL URL asks to check the server's certificate against the system's trust store, but /nonexistent/ca-certificates.crt and /nonexistent/certs do not exist: install the package ca-certificates, or name the server's CA with sslrootcert=FILE")
        }
        // Modes that check nothing need no trust store.
        for query in ["", "?sslmode=require", "?sslmode=disable"] {
            XCTAssertNoThrow(try PostgresURL(base + query).configurations(systemTrustStore: ["/nonexistent/certs"]), query)
        }
        XCTAssertThrowsError(try PostgresURL(base + "?sslmode=verify-ca&sslrootcert=/nonexistent/root.crt").configurations()) { error in
            XCTAssertEqual("\(error)", "the PostgreSQL URL's sslrootcert=/nonexistent/root.crt cannot be read (missing, or not readable by this user)")
        }
    }
}
