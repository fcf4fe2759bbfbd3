package import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// An exclusive `flock` on a file, held while the value lives: how the tracker's journal and the
/// outbox keep a second process (an app extension sharing the folder) off a file in use.
package final class FileLock {
  private let descriptor: Int32

  private init(descriptor: Int32) { self.descriptor = descriptor }

  /// Opens `url` (creating it if asked) and locks it; `nil` when another process holds it.
  package static func acquire(_ url: URL, creating: Bool) throws -> FileLock? {
    let descriptor = url.path.withCString { open($0, creating ? O_RDWR | O_CREAT : O_RDWR, 0o600) }
    guard descriptor >= 0 else { throw FileError.io("open \(url.lastPathComponent)", errno) }
    guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
      close(descriptor)
      return nil
    }
    return FileLock(descriptor: descriptor)
  }

  /// The file's size in bytes.
  package var size: Int { Int(max(0, lseek(descriptor, 0, SEEK_END))) }

  deinit {
    flock(descriptor, LOCK_UN)
    close(descriptor)
  }
}
