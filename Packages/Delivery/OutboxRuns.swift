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
  /// outbox nobody holds (its process ended or was killed) is taken (its lock held from then on):
  /// its undelivered records move into this run's, in order, **as room allows** — what does not fit
  /// now waits in its folder and moves as delivery makes room (``adoptWaitingRuns()``), so adoption
  /// never evicts a record. An emptied folder is deleted. An outbox an earlier version kept
  /// directly in `directory` is adopted the same way. Records move in chunks of 256, each
  /// acknowledged in the dead run's outbox once copied: a process killed while adopting leaves at
  /// most one chunk in both outboxes, which the collector (and Mixpanel) de-duplicate by event id.
  /// Counter records carry no id: such a kill can count an increment twice.
  ///
  /// - Returns: the outbox, and how many records it adopted at once.
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
      throw FileError.io("lock \(making.lastPathComponent)", EWOULDBLOCK)
    }
    let final = runs.appendingPathComponent(name)
    guard rename(making.path, final.path) == 0 else {
      throw FileError.io("rename \(making.lastPathComponent)", errno)
    }
    let own = try Outbox(directory: final, configuration: configuration, owner: owner)
    var waiting: [WaitingRun] = []
    let names = (try? FileManager.default.contentsOfDirectory(atPath: runs.path)) ?? []
    for name in names.sorted() where name != own.directory.lastPathComponent && !name.hasPrefix(".") {
      let folder = runs.appendingPathComponent(name)
      if let orphan = try? Outbox(directory: folder, configuration: configuration) {
        waiting.append(WaitingRun(outbox: orphan, deletesFolder: true))
      }
    }
    if FileManager.default.fileExists(atPath: directory.appendingPathComponent(cursorName).path),
      let orphan = try? Outbox(directory: directory, configuration: configuration)
    {
      waiting.append(WaitingRun(outbox: orphan, deletesFolder: false))
    }
    own.waitingRuns.withLock { $0 = waiting }
    return (own, own.adoptWaitingRuns())
  }

  /// Whether ended runs' records still wait to move in.
  public var hasWaitingRuns: Bool { waitingRuns.withLock { !$0.isEmpty } }

  /// Moves ended runs' records in while there is room, oldest run first; deletes each run's files
  /// once it is empty. The delivery queue calls it after every acknowledgement.
  ///
  /// - Returns: how many records moved.
  @discardableResult
  public func adoptWaitingRuns() -> Int {
    waitingRuns.withLock { runs in
      var count = 0
      while let run = runs.first {
        // Chunk by chunk, each acknowledged in the dead run's outbox once it is in this one: a
        // process killed while adopting leaves at most one chunk in both.
        while hasRoom {
          let records = run.outbox.read(maximumRecords: 256)
          guard let last = records.last else { break }
          for record in records where append(kind: record.kind, timestamp: record.timestamp, payload: record.payload) {
            count += 1
          }
          run.outbox.acknowledge(through: last.end)
        }
        guard run.outbox.stats.records == 0 else { break }
        run.delete()
        runs.removeFirst()
      }
      return count
    }
  }
}

/// An ended run's outbox, held (its lock taken) while its records wait to move into a live one.
struct WaitingRun {
  let outbox: Outbox
  /// The run had a folder of its own (`runs/<uuid>`); otherwise its files sit in a service's folder.
  let deletesFolder: Bool

  func delete() {
    let files = FileManager.default
    let folder = outbox.directory
    if deletesFolder {
      try? files.removeItem(at: folder)
    } else {
      let names = (try? files.contentsOfDirectory(atPath: folder.path)) ?? []
      for name in names where name.hasPrefix("segment-") || name == Outbox.cursorName || name == Outbox.ownerName {
        try? files.removeItem(at: folder.appendingPathComponent(name))
      }
    }
  }
}
