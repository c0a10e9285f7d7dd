import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Replaces a file all at once: readers (a shipping job, the next checkpoint run) see the old
/// file or the new one, never a part, and a failure leaves the old file as it was and no other
/// file behind. Written to a temporary name in the same directory (a rename does not cross file
/// systems), synced, given its mode, renamed over the target, then the directory synced so the
/// rename survives a power cut.
package enum AtomicFile {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package static func write(_ data: Data, to path: String, mode: mode_t) throws {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var template = Array("\(directory)/.\(url.lastPathComponent).tmp-XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot create a file in \(directory): \(errorText())")
        }
        let temporary = String(cString: template)
        do {
            try writeAll(data, to: descriptor)
            // mkstemp gives 600; fchmod, not the umask, sets the mode we promise.
            guard fchmod(descriptor, mode) == 0, fsync(descriptor) == 0 else {
                throw Failure(description: "cannot write \(temporary): \(errorText())")
            }
            guard close(descriptor) == 0 else { throw Failure(description: "cannot write \(temporary): \(errorText())") }
        } catch {
            close(descriptor)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let reason = errorText()
            unlink(temporary)
            throw Failure(description: "cannot replace \(path): \(reason)")
        }
        syncDirectory(directory)
    }

    private static func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw Failure(description: "cannot write: \(errorText())") }
                offset += written
            }
        }
    }

    /// Best effort: the file is complete either way; this only makes the rename durable.
    private static func syncDirectory(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }

    private static func errorText() -> String {
        String(cString: strerror(errno))
    }
}
