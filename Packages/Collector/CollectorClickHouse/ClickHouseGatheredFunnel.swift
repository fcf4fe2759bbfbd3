import CollectorReports
import CollectorStore
import NIOCore

/// A funnel's rows read in the order the server reads them (the closed days' step times, one row
/// per step name and device, with no sort on the server): every unit's events are gathered as the
/// answer arrives, into ``buckets`` by their unit's hash, then each bucket is sorted by unit and
/// walked on its own task, the buckets at once. The server's sort waited for every row before
/// sending the first; here its reading, the collector's gathering and (after) the walk on every
/// core take its place (`Docs/Benchmarks.md`).
///
/// The events are held until the answer ends, 4 or 8 bytes each (``FunnelRowFormat``): past
/// ``most`` events nothing more is kept and ``finished(owners:)`` answers `nil`, so the funnel reads
/// its rows sorted instead, a unit at a time (``FunnelRows``). Rows are gathered by device, so the
/// people's devices (read beside the answer) are needed only at the end: each bucket's task then
/// puts aside the rows of a person with two or more devices, by the person's hash, and those
/// buckets are walked after, each person's devices' rows together.
struct GatheredFunnelRows: Sendable {
  /// The buckets units are gathered in, by the top bits of their hash.
  static let bucketBits = 4
  /// The most events ever gathered, whatever a funnel's limits ask (16–32 GB of them).
  static let mostEver = Int(UInt32.max)

  private let walk: PackedFunnelWalk
  private let most: Int
  private var reader: UnitRowReader
  private var gathered = 0
  /// The rows, each as the answer's bytes (a slice of the piece that brought them: kept as they
  /// came, not copied into one array that grows).
  private var buckets = emptyBuckets
  /// Whether more than ``most`` events came (nothing is kept then).
  private(set) var overflowed = false

  /// Gathers the rows of `walk`'s funnel, of `format`, up to `most` events (at most ``mostEver``).
  init(walk: PackedFunnelWalk, format: FunnelRowFormat, most: Int) {
    (self.walk, self.most) = (walk, min(most, Self.mostEver))
    reader = UnitRowReader(format: format)
  }

  /// Takes the answer's next piece.
  mutating func take(_ piece: ByteBuffer) throws {
    guard !overflowed else { return }
    reader.append(piece)
    while let row = try reader.next() {
      gathered += row.events.readableBytes / reader.format.eventBytes
      guard gathered <= most else {
        (overflowed, buckets) = (true, [])
        return
      }
      buckets[Self.bucket(of: row.unit)].append(row)
    }
  }

  /// Every unit walked once the answer has ended (a row cut short is an error), the devices of
  /// each person with two or more as their person (`owners`: the person's hash by the device's), or
  /// `nil` when more than ``most`` events came.
  func finished(owners: OwnedDevices) async throws -> WalkedFunnel? {
    guard !overflowed else { return nil }
    do {
      try reader.finished()
      return try await walked(owners: owners)
    } catch let error as FunnelRows.Malformed {
      // As a piece that cannot be read fails the answer's stream.
      throw StoreError.unavailable("ClickHouse's answer could not be read: \(error)")
    }
  }

  /// Every unit walked, on a task a bucket: first each bucket's devices, its rows of people's
  /// devices put aside as their person's in buckets by the person's hash; then those buckets, each
  /// joined from every first task (one task walking every person's rows was a tail on one core:
  /// half the 3-step funnel's walk at 100M events, counting people).
  private func walked(owners: OwnedDevices) async throws -> WalkedFunnel {
    let (walk, format) = (walk, reader.format)
    var walked = WalkedFunnel(reached: walk.reached, tied: [:], owners: owners)
    func add(_ part: (reached: [Int64], tied: [UInt64: [Int64]])) {
      for step in walked.reached.indices { walked.reached[step] += part.reached[step] }
      walked.tied.merge(part.tied) { $1 }
    }
    // By the first task, by person bucket: the rows of people's devices.
    let people = try await withThrowingTaskGroup(of: (part: Walked, people: [[UnitRowReader.Row]]).self) { group in
      for bucket in buckets where !bucket.isEmpty {
        group.addTask {
          let order = Self.order(bucket)
          guard !owners.isEmpty else { return (try Self.walk(bucket, order, walk, format), []) }
          let (devices, people) = Self.split(bucket, order, owners: owners)
          return (try Self.walk(bucket, devices, walk, format), people)
        }
      }
      var people: [[[UnitRowReader.Row]]] = []
      for try await walked in group {
        add(walked.part)
        if !walked.people.isEmpty { people.append(walked.people) }
      }
      return people
    }
    guard !people.isEmpty else { return walked }
    try await withThrowingTaskGroup(of: Walked.self) { group in
      for index in 0..<1 << Self.bucketBits {
        group.addTask {
          let rows = Array(people.map { $0[index] }.joined())
          return try Self.walk(rows, Self.order(rows), walk, format)
        }
      }
      for try await part in group { add(part) }
    }
    return walked
  }

  /// What a bucket's walk comes to: how many reached each step, and its tied units' events.
  private typealias Walked = (reached: [Int64], tied: [UInt64: [Int64]])

  /// A bucket for every value of a hash's top ``bucketBits`` bits, all empty.
  private static var emptyBuckets: [[UnitRowReader.Row]] { Array(repeating: [], count: 1 << bucketBits) }

  /// The bucket of the unit (or person) hashed `hash`.
  private static func bucket(of hash: UInt64) -> Int { Int(hash >> UInt64(64 - bucketBits)) }

  /// `bucket`'s units in `order` split: the devices walked as themselves (places in `bucket`), and
  /// the rows of owned devices as their person's, in buckets by the person's hash. Both lists are
  /// sorted by device, so they are merged, not looked up.
  private static func split(_ bucket: [UnitRowReader.Row], _ order: [(unit: UInt64, row: Int)], owners: OwnedDevices)
    -> (devices: [(unit: UInt64, row: Int)], people: [[UnitRowReader.Row]])
  {
    var (devices, people) = ([(unit: UInt64, row: Int)](), Self.emptyBuckets)
    var owned = owners.start(atLeast: order.first?.unit ?? 0)
    for entry in order {
      while owned < owners.devices.count, owners.devices[owned] < entry.unit { owned += 1 }
      guard owned < owners.devices.count, owners.devices[owned] == entry.unit else {
        devices.append(entry)
        continue
      }
      let (row, person) = (bucket[entry.row], owners.persons[owned])
      people[Self.bucket(of: person)].append(UnitRowReader.Row(unit: person, place: row.place, events: row.events))
    }
    return (devices, people)
  }

  /// The places of `rows` in their units' order, sorted as plain integers (rows hold their bytes'
  /// buffers: moving them in a sort retained and released each).
  private static func order(_ rows: [UnitRowReader.Row]) -> [(unit: UInt64, row: Int)] {
    rows.indices.map { (unit: rows[$0].unit, row: $0) }.sorted { $0.unit < $1.unit }
  }

  /// The units of `rows` walked by `walk`, in `order` (places in `rows`, by unit): how many reached
  /// each step, and the units it could not order, with their events. Each unit's rows are copied
  /// into one buffer, each event checked (``FunnelRowFormat/append(_:to:)``), and merged.
  private static func walk(
    _ rows: [UnitRowReader.Row], _ order: [(unit: UInt64, row: Int)], _ walk: PackedFunnelWalk,
    _ format: FunnelRowFormat
  ) throws -> Walked {
    var (walk, tied, events, unit, scratch) = (walk, [UInt64: [Int64]](), [Int64](), [Int64](), [Int64]())
    var runs: [Range<Int>] = []
    var index = 0
    while index < order.count {
      let id = order[index].unit
      runs.removeAll(keepingCapacity: true)
      events.removeAll(keepingCapacity: true)
      while index < order.count, order[index].unit == id {
        let start = events.count
        try format.append(rows[order[index].row], to: &events)
        runs.append(start..<events.count)
        index += 1
      }
      let sorted = events.withUnsafeBufferPointer {
        PackedFunnelWalk.merge(runs, of: $0, into: &unit, scratch: &scratch)
      }
      if !unit.withUnsafeMutableBufferPointer({ walk.walk($0, sorted: sorted) }) { tied[id] = unit }
    }
    return (walk.reached, tied)
  }
}
