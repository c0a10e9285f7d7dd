#if canImport(Glibc)
import Glibc
#endif

/// A password or one-time code as a NUL-terminated C string that is wiped when released.
///
/// Swift `String`s cannot be wiped (they are copied and shared freely), so secrets are moved
/// into this buffer as early as possible and handed to PAM only as `strdup` copies, which PAM
/// overwrites and frees itself.
package final class SecretBytes: @unchecked Sendable {
    private let pointer: UnsafeMutablePointer<CChar>
    private let capacity: Int

    package init(_ text: String) {
        var bytes = Array(text.utf8CString)
        capacity = bytes.count
        pointer = .allocate(capacity: capacity)
        pointer.initialize(from: &bytes, count: capacity)
        bytes.withUnsafeMutableBytes { explicit_bzero($0.baseAddress!, $0.count) }
    }

    /// A `malloc`'d copy for a PAM response; PAM takes ownership and frees it.
    func mallocCopy() -> UnsafeMutablePointer<CChar>? {
        strdup(pointer)
    }

    var cString: UnsafePointer<CChar> { UnsafePointer(pointer) }

    deinit {
        explicit_bzero(pointer, capacity)
        pointer.deallocate()
    }
}
