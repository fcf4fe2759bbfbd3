package import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// A file of fixed size mapped into memory, shared with the kernel's page cache: bytes stored into
/// it survive the process being killed (the kernel keeps the pages), and `sync()` pushes them to
/// the disk.
///
/// Not thread-safe by itself: its owners (the outbox, the tracker's journal) serialise every access
/// behind their locks.
package final class MappedFile {
  package let url: URL
  package let size: Int
  package let base: UnsafeMutableRawPointer
  private let descriptor: Int32

  /// Opens (creating if needed) `url` and maps `size` bytes of it; a shorter file is extended with zeros.
  /// Returns the mapping and the file's size before it was extended.
  package static func open(_ url: URL, size: Int) throws -> (file: MappedFile, originalSize: Int) {
    let descriptor = url.path.withCString { path in
      #if canImport(Darwin)
        Darwin.open(path, O_RDWR | O_CREAT, 0o600)
      #else
        Glibc.open(path, O_RDWR | O_CREAT, 0o600)
      #endif
    }
    guard descriptor >= 0 else { throw FileError.io("open \(url.lastPathComponent)", errno) }
    // The size from the end offset, not fstat: no file-timestamp API (Apple's required-reason list).
    let end = lseek(descriptor, 0, SEEK_END)
    guard end >= 0 else {
      close(descriptor)
      throw FileError.io("size \(url.lastPathComponent)", errno)
    }
    let originalSize = Int(end)
    if originalSize < size, ftruncate(descriptor, off_t(size)) != 0 {
      close(descriptor)
      throw FileError.io("extend \(url.lastPathComponent)", errno)
    }
    guard let mapped = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), mapped != MAP_FAILED else {
      close(descriptor)
      throw FileError.io("map \(url.lastPathComponent)", errno)
    }
    return (MappedFile(url: url, size: size, base: mapped, descriptor: descriptor), originalSize)
  }

  private init(url: URL, size: Int, base: UnsafeMutableRawPointer, descriptor: Int32) {
    self.url = url
    self.size = size
    self.base = base
    self.descriptor = descriptor
  }

  /// Writes dirty pages to the disk and waits for it.
  package func sync() {
    _ = msync(base, size, MS_SYNC)
  }

  deinit {
    munmap(base, size)
    close(descriptor)
  }
}

/// What went wrong with a file the library keeps (an outbox segment, the tracker's journal).
public struct FileError: Error, CustomStringConvertible, Sendable {
  /// What the library was doing, e.g. `map segment-0000000000000003.ctq`.
  public let operation: String
  /// The system's error number.
  public let code: Int32

  package static func io(_ operation: String, _ code: Int32) -> FileError {
    FileError(operation: operation, code: code)
  }

  public var description: String { "\(operation): \(String(cString: strerror(code)))" }
}
