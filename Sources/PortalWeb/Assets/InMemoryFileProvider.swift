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

    /// Each file's content, ready to send (made once, not per request).
    let files: [String: ByteBuffer]
    /// When this instance started: the files cannot change while it runs.
    let loadedAt: Date

    init(files: [String: [UInt8]], loadedAt: Date) {
        self.files = files.mapValues { ByteBuffer(bytes: $0) }
        self.loadedAt = loadedAt
    }

    func getFileIdentifier(_ path: String) -> String? {
        let relative = String(path.drop { $0 == "/" })
        return files[relative] == nil ? nil : relative
    }

    func getAttributes(id: String) async throws -> Attributes? {
        files[id].map { Attributes(size: $0.readableBytes, modificationDate: loadedAt) }
    }

    func loadFile(id: String, context: some RequestContext) async throws -> ResponseBody {
        ResponseBody(byteBuffer: files[id] ?? ByteBuffer())
    }

    /// Not reached (``StaticFileGuardMiddleware`` drops `Range`), but correct: the part of the
    /// file the range covers, empty when it starts past the end.
    func loadFile(id: String, range: ClosedRange<Int>, context: some RequestContext) async throws -> ResponseBody {
        let buffer = files[id] ?? ByteBuffer()
        let start = max(0, range.lowerBound), end = min(buffer.readableBytes - 1, range.upperBound)
        guard start <= end else { return ResponseBody(byteBuffer: ByteBuffer()) }
        return ResponseBody(byteBuffer: buffer.getSlice(at: buffer.readerIndex + start, length: end - start + 1) ?? ByteBuffer())
    }
}
