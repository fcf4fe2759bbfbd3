import CollectorReports
import NIOCore

/// A funnel's rows read in the order the server reads them (the closed days' step times, one row
/// per step name and device, with no sort on the server): every unit's events are gathered as the
/// answer arrives, into ``buckets`` by their unit's hash, then each bucket is sorted by unit and
/// walked on its own task, the buckets at once. The server's sort waited for every row before
/// sending the first; here its reading, the collector's gathering and (after) the walk on every
/// core take its place (`Docs/Benchmarks.md`).
///
/// The events are held until the answer ends, 8 bytes each: past ``most`` events nothing more is
/// kept and ``finished(owners:)`` answers `nil`, so the funnel reads its rows sorted instead, a unit
/// at a time (``FunnelRows``). Rows are gathered by device, so the people's devices (read beside the
/// answer) are needed only at the end: the devices of a person with two or more are then walked
/// as their person, all devices' rows together, on a task of their own.
struct GatheredFunnelRows: Sendable {
  /// A row's events, where they are in ``events``.
  struct Row: Sendable {
    var unit: UInt64
    var start: UInt32
    var count: UInt32
  }

  /// The buckets units are gathered in, by the top bits of their hash.
  static let bucketBits = 4
  /// The most events gathered: as many as a row's place can name.
  static let mostEver = Int(UInt32.max)

  private let walk: PackedFunnelWalk
  private let most: Int
  private var reader: UnitRowReader
  private var events: [Int64] = []
  private var buckets = Array(repeating: [Row](), count: 1 << bucketBits)
  /// Whether more than ``most`` events came (nothing is kept then).
  private(set) var overflowed = false

  /// Gathers the rows of `walk`'s funnel, up to `most` events (at most ``mostEver``).
  init(walk: PackedFunnelWalk, most: Int) {
    (self.walk, self.most) = (walk, min(most, Self.mostEver))
    reader = UnitRowReader(names: walk.names.count)
  }

  /// Takes the answer's next piece.
  mutating func take(_ piece: ByteBuffer) throws {
    guard !overflowed else { return }
    reader.append(piece)
    while let row = try reader.next() {
      let start = events.count
      try reader.add(row, to: &events)
      guard events.count <= most else {
        (overflowed, events, buckets) = (true, [], [])
        return
      }
      buckets[Int(row.unit >> UInt64(64 - Self.bucketBits))].append(
        Row(unit: row.unit, start: UInt32(start), count: UInt32(events.count - start)))
    }
    reader.compact()
  }

  /// Every unit walked once the answer has ended (a row cut short is an error), the devices of
  /// each person with two or more as their person (`owners`: the person's hash by the device's), or
  /// `nil` when more than ``most`` events came.
  func finished(owners: [UInt64: UInt64]) async throws -> WalkedFunnel? {
    guard !overflowed else { return nil }
    try reader.finished()
    let (events, walk) = (events, walk)
    return await withTaskGroup(of: (reached: [Int64], tied: [UInt64: [Int64]]).self) { group in
      for bucket in buckets where !bucket.isEmpty {
        group.addTask { Self.walk(owners.isEmpty ? bucket : bucket.filter { owners[$0.unit] == nil }, events, walk) }
      }
      if !owners.isEmpty {
        group.addTask {
          let ofPeople = buckets.joined().compactMap { row in
            owners[row.unit].map { Row(unit: $0, start: row.start, count: row.count) }
          }
          return Self.walk(ofPeople, events, walk)
        }
      }
      var walked = WalkedFunnel(reached: walk.reached, tied: [:], owners: owners)
      for await part in group {
        for step in walked.reached.indices { walked.reached[step] += part.reached[step] }
        walked.tied.merge(part.tied) { $1 }
      }
      return walked
    }
  }

  /// `rows`' units walked by `walk` (rows of one unit together once sorted): how many reached each
  /// step, and the units it could not order, with their events.
  private static func walk(_ rows: [Row], _ events: [Int64], _ walk: PackedFunnelWalk)
    -> (reached: [Int64], tied: [UInt64: [Int64]])
  {
    var (walk, tied, unit) = (walk, [UInt64: [Int64]](), [Int64]())
    let rows = rows.sorted { $0.unit < $1.unit }
    var index = 0
    while index < rows.count {
      let id = rows[index].unit
      unit.removeAll(keepingCapacity: true)
      while index < rows.count, rows[index].unit == id {
        let start = Int(rows[index].start)
        unit.append(contentsOf: events[start..<start + Int(rows[index].count)])
        index += 1
      }
      if !unit.withUnsafeMutableBufferPointer({ walk.walk($0) }) { tied[id] = unit }
    }
    return (walk.reached, tied)
  }
}
