import Foundation
import Hummingbird

/// Serves ``AssetFiles/publicFiles`` through Hummingbird's `FileMiddleware` (which adds
/// content types, `Last-Modified`, `ETag` and conditional requests).
struct InMemoryFileProvider: FileProvider {
    struct Attributes: FileMiddlewareFileAttributes {
        let isFolder = false
        let size: Int
        let modificationDate: Date
    }

    let files: [String: [UInt8]]
    /// When this instance started: the files cannot change while it runs.
    let loadedAt: Date

    func getFileIdentifier(_ path: String) -> String? {
        let relative = String(path.drop { $0 == "/" })
        return files[relative] == nil ? nil : relative
    }

    func getAttributes(id: String) async throws -> Attributes? {
        files[id].map { Attributes(size: $0.count, modificationDate: loadedAt) }
    }

    func loadFile(id: String, context: some RequestContext) async throws -> ResponseBody {
        ResponseBody(byteBuffer: ByteBuffer(bytes: files[id] ?? []))
    }

    func loadFile(id: String, range: ClosedRange<Int>, context: some RequestContext) async throws -> ResponseBody {
        let bytes = files[id] ?? []
        let clamped = range.clamped(to: 0...max(0, bytes.count - 1))
        return ResponseBody(byteBuffer: ByteBuffer(bytes: bytes.isEmpty ? [] : Array(bytes[clamped])))
    }
}
