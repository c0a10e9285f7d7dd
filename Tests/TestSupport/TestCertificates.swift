import Foundation

/// Self-signed P-256 certificates made with the `openssl` command, as an operator would make
/// them, for the TLS and mutual-TLS tests.
package struct TestCertificate: Sendable {
    package let certificate: String
    package let privateKey: String

    /// `SHA256 Fingerprint=AB:CD:…` as `openssl x509 -fingerprint -sha256` prints it: the form an
    /// operator copies into the server's allow-list.
    package func opensslFingerprint() throws -> String {
        let line = try Shell.output("/usr/bin/openssl", "x509", "-in", certificate, "-noout", "-fingerprint", "-sha256")
        return String(line.split(separator: "=", maxSplits: 1).last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A certificate for `localhost` and 127.0.0.1 (servers) or a plain common name (clients).
    package static func make(named name: String, in directory: String) throws -> TestCertificate {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificate = "\(directory)/\(name).pem", key = "\(directory)/\(name).key"
        try Shell.run("/usr/bin/openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                      "-nodes", "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=\(name)",
                      "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1")
        return TestCertificate(certificate: certificate, privateKey: key)
    }
}
