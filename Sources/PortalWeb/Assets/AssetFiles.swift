import Foundation
import PortalAssets

/// The page templates and static files the portal serves. By default they are the ones built
/// into the binary (`Templates/` and `Public/` at build time, see the `EmbedAssets` plugin), so
/// `portal serve` runs from any directory; `--templates` and `--public-directory` read them from
/// directories instead (to change a page without a rebuild).
package struct AssetFiles: Sendable {
    /// Template name (path under `Templates/` without `.mustache`, e.g. `signin/signin`) to text.
    package let templates: [String: String]
    /// Path under `Public/` (e.g. `css/portal.css`) to content.
    package let publicFiles: [String: [UInt8]]

    package struct Unreadable: Error, CustomStringConvertible {
        package let description: String
    }

    /// The built-in files, with either set replaced by a directory's content when one is given.
    package static func load(templatesDirectory: String? = nil, publicDirectory: String? = nil) throws -> AssetFiles {
        let templates = try templatesDirectory.map { try files(in: $0) } ?? embedded(under: "Templates/")
        let publicFiles = try publicDirectory.map { try files(in: $0) } ?? embedded(under: "Public/")
        return AssetFiles(
            templates: Dictionary(uniqueKeysWithValues: templates.compactMap { path, bytes in
                guard path.hasSuffix(".mustache") else { return nil }
                return (String(path.dropLast(".mustache".count)), String(decoding: bytes, as: UTF8.self))
            }),
            publicFiles: publicFiles)
    }

    /// The built-in files under `prefix`, keyed by the rest of their path.
    static func embedded(under prefix: String) -> [String: [UInt8]] {
        var result: [String: [UInt8]] = [:]
        for (path, base64) in EmbeddedAssets.files where path.hasPrefix(prefix) {
            // The build tool writes only base64; anything else is a broken build, not a file.
            guard let data = Data(base64Encoded: base64) else { preconditionFailure("built-in file \(path) is not base64") }
            result[String(path.dropFirst(prefix.count))] = Array(data)
        }
        return result
    }

    /// Every regular file below `directory`, keyed by its path relative to it.
    static func files(in directory: String) throws -> [String: [UInt8]] {
        let root = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isDirectory), isDirectory.boolValue,
              let enumerator = FileManager.default.enumerator(
            at: root, includingPropertiesForKeys: [.isRegularFileKey], options: [.skipsHiddenFiles])
        else { throw Unreadable(description: "directory '\(directory)' cannot be read") }
        var result: [String: [UInt8]] = [:]
        for case let url as URL in enumerator {
            guard (try? url.resourceValues(forKeys: [.isRegularFileKey]))?.isRegularFile == true else { continue }
            let relative = String(url.standardizedFileURL.path.dropFirst(root.path.count + 1))
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw Unreadable(description: "file '\(url.path)' cannot be read")
            }
            result[relative] = Array(data)
        }
        return result
    }
}
