public import Foundation

/// Contexts stored once per change beside an outbox, and referenced from each record by a 64-bit
/// hash instead of repeated in it (``RecordFraming``'s reference form).
///
/// A service's context (app, OS, device, locale…) changes a few times in an install's life, while
/// its records number in the hundreds of thousands: stored inline it would be more than half of
/// every record. Here it is written once, as `<directory>/<16 hex digits>.ctx`, before the first
/// record that references it is appended, so a record in the outbox always finds its context after
/// a crash or a restart (the file is written whole, then renamed into place). The newest
/// ``keeping`` files are kept when the store opens; older ones belong to app versions whose records
/// have long been sent. When a file cannot be written (disk full), records carry their context
/// inline again: nothing is lost, the record is only longer.
///
/// `@unchecked Sendable`: all mutable state is accessed under `lock`.
public final class RecordContexts: @unchecked Sendable {
  /// The directory of context files (created if needed).
  public let directory: URL
  /// How many context files survive opening the store (the most recently used).
  public let keeping: Int

  private let lock = NSLock()
  private var stored: [UInt64: [UInt8]] = [:]
  private var lastContext: [UInt8]?
  private var lastPrefix: [UInt8] = []

  /// Opens the store in `directory`, keeping the `keeping` most recently written contexts.
  public init(directory: URL, keeping: Int = 256) {
    self.directory = directory
    self.keeping = max(1, keeping)
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    prune()
  }

  /// The record prefix for `context`: a reference to its stored copy (stored now if new), or the
  /// context inline when it cannot be stored. Cheap when the context is the previous call's.
  public func prefix(for context: [UInt8]) -> [UInt8] {
    lock.lock()
    defer { lock.unlock() }
    if context == lastContext { return lastPrefix }
    let hash = Self.hash(context)
    let isStored = stored[hash].map { $0 == context } ?? write(context, hash: hash)
    if isStored {
      stored[hash] = context
      lastPrefix = RecordFraming.referencePrefix(hash)
    } else {
      lastPrefix = RecordFraming.inlinePrefix(context)
    }
    lastContext = context
    return lastPrefix
  }

  /// The context of `record`: its inline bytes or its stored copy; `nil` when a referenced copy is
  /// missing (deleted by hand, or older than the ``keeping`` newest).
  public func context(of record: [UInt8]) -> [UInt8]? {
    guard let hash = RecordFraming.reference(record) else { return Array(RecordFraming.context(record)) }
    lock.lock()
    defer { lock.unlock() }
    if let context = stored[hash] { return context }
    guard let data = FileManager.default.contents(atPath: url(hash).path), !data.isEmpty else { return nil }
    let context = Array(data)
    guard Self.hash(context) == hash else { return nil }
    stored[hash] = context
    return context
  }

  private func url(_ hash: UInt64) -> URL {
    let hex = String(hash, radix: 16)
    return directory.appendingPathComponent(String(repeating: "0", count: 16 - hex.count) + hex + ".ctx")
  }

  /// Writes the context whole under a temporary name, then renames it into place.
  private func write(_ context: [UInt8], hash: UInt64) -> Bool {
    let target = url(hash)
    if let existing = FileManager.default.contents(atPath: target.path) {
      // Another context with the same hash keeps its file; this one then travels inline.
      guard Array(existing) == context else { return false }
      touch(target)
      return true
    }
    let temporary = target.appendingPathExtension("tmp")
    do {
      try Data(context).write(to: temporary)
      guard rename(temporary.path, target.path) == 0 else { throw CocoaError(.fileWriteUnknown) }
      return true
    } catch {
      try? FileManager.default.removeItem(at: temporary)
      return false
    }
  }

  private func touch(_ url: URL) {
    try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: url.path)
  }

  /// Deletes all but the `keeping` most recently written context files, and leftover temporaries.
  private func prune() {
    let keys: [URLResourceKey] = [.contentModificationDateKey]
    guard
      let files = try? FileManager.default.contentsOfDirectory(
        at: directory, includingPropertiesForKeys: keys)
    else { return }
    for file in files where file.pathExtension == "tmp" { try? FileManager.default.removeItem(at: file) }
    let contexts = files.filter { $0.pathExtension == "ctx" }.map { file in
      (file, (try? file.resourceValues(forKeys: Set(keys)).contentModificationDate) ?? .distantPast)
    }
    guard contexts.count > keeping else { return }
    for (file, _) in contexts.sorted(by: { $0.1 > $1.1 }).dropFirst(keeping) {
      try? FileManager.default.removeItem(at: file)
    }
  }

  /// FNV-1a, 64 bits: stable across launches and platforms (unlike `Hasher`).
  static func hash(_ bytes: [UInt8]) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes {
      hash ^= UInt64(byte)
      hash &*= 0x0000_0100_0000_01b3
    }
    return hash
  }
}
