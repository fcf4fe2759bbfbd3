import CoreTracker
public import Foundation

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

extension Outbox {
  /// Opens an outbox of this process run's own in `directory`, which several processes may share
  /// (an app and its extensions in an App Group container), and moves into it what earlier runs
  /// left undelivered.
  ///
  /// Each run's outbox is `runs/<uuid>/` under `directory`, held with an exclusive lock while the
  /// run lasts, so no two processes ever write or send the same records. At opening, every run
  /// outbox nobody holds (its process ended or was killed) is adopted: its undelivered records are
  /// appended to this run's, in order, and its folder is deleted. An outbox an earlier version kept
  /// directly in `directory` is adopted the same way. Records move in chunks of 256, each
  /// acknowledged in the dead run's outbox once copied: a process killed while adopting leaves at
  /// most one chunk in both outboxes, which the collector (and Mixpanel) de-duplicate by event id.
  /// Counter records carry no id: such a kill can count an increment twice.
  ///
  /// - Returns: the outbox, and how many records it adopted.
  public static func openRun(
    in directory: URL, configuration: OutboxConfiguration = OutboxConfiguration()
  ) throws -> (outbox: Outbox, adopted: Int) {
    let runs = directory.appendingPathComponent("runs")
    // Made under a name adoption skips and locked before it takes its real name, so no other
    // process can adopt (and delete) a run outbox that is being opened.
    let name = UUID().uuidString.lowercased()
    let making = runs.appendingPathComponent(".making-" + name)
    try FileManager.default.createDirectory(at: making, withIntermediateDirectories: true)
    guard let owner = try FileLock.acquire(making.appendingPathComponent(ownerName), creating: true) else {
      throw OutboxError.io("lock \(making.lastPathComponent)", EWOULDBLOCK)
    }
    let final = runs.appendingPathComponent(name)
    guard rename(making.path, final.path) == 0 else {
      throw OutboxError.io("rename \(making.lastPathComponent)", errno)
    }
    let own = try Outbox(directory: final, configuration: configuration, owner: owner)
    var adopted = 0
    let names = (try? FileManager.default.contentsOfDirectory(atPath: runs.path)) ?? []
    for name in names.sorted() where name != own.directory.lastPathComponent && !name.hasPrefix(".") {
      adopted += own.adopt(runs.appendingPathComponent(name), deletingFolder: true)
    }
    if FileManager.default.fileExists(atPath: directory.appendingPathComponent(cursorName).path) {
      adopted += own.adopt(directory, deletingFolder: false)
    }
    return (own, adopted)
  }

  /// Appends the undelivered records of the outbox in `folder` (if no one holds it), then deletes
  /// them: the whole folder, or (for an outbox kept directly in a service's folder) its own files.
  private func adopt(_ folder: URL, deletingFolder: Bool) -> Int {
    guard let orphan = try? Outbox(directory: folder, configuration: configuration) else { return 0 }
    var count = 0
    // Chunk by chunk, each acknowledged in the dead run's outbox once it is in this one: a process
    // killed while adopting leaves at most one chunk in both.
    while true {
      let records = orphan.read(maximumRecords: 256)
      guard let last = records.last else { break }
      for record in records where append(kind: record.kind, timestamp: record.timestamp, payload: record.payload) {
        count += 1
      }
      orphan.acknowledge(through: last.end)
    }
    let files = FileManager.default
    if deletingFolder {
      try? files.removeItem(at: folder)
    } else {
      let names = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
      for name in names where name.hasPrefix("segment-") || name == Self.cursorName || name == Self.ownerName {
        try? files.removeItem(at: folder.appendingPathComponent(name))
      }
    }
    return count
  }
}
