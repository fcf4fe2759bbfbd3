import CoreTracker
import Foundation
import TestSupport
import Testing

@testable import Delivery

private func payload(_ index: Int, size: Int = 40) -> [UInt8] {
  let text = "event-\(index)-"
  return Array((text + String(repeating: "x", count: max(0, size - text.count))).utf8)
}

private func index(of record: OutboxRecord) -> Int {
  Int(String(decoding: record.payload, as: UTF8.self).split(separator: "-")[1])!
}

@Suite("Outbox")
struct OutboxTests {
  @Test func recordsComeBackInOrderAndAcknowledgedOnesAreGone() throws {
    let directory = TemporaryDirectory()
    let outbox = try Outbox(directory: directory.url)
    for index in 0..<10 { #expect(outbox.append(kind: 2, timestamp: Int64(index), payload: payload(index))) }
    let first = outbox.read(maximumRecords: 4)
    #expect(first.map(index(of:)) == [0, 1, 2, 3])
    #expect(first.map(\.timestamp) == [0, 1, 2, 3])
    #expect(first.allSatisfy { $0.kind == 2 })
    // Reading does not remove; acknowledging does.
    #expect(outbox.read(maximumRecords: 2).map(index(of:)) == [0, 1])
    outbox.acknowledge(through: first[3].end)
    #expect(outbox.read(maximumRecords: 100).map(index(of:)) == Array(4..<10))
    #expect(outbox.read(maximumRecords: 100, after: first[3].end).count == 6)
    #expect(outbox.stats.records == 6)
  }

  /// A batch in flight while the outbox evicts some of its records: they share the batch's outcome,
  /// and received = delivered + dropped + queued holds at every step.
  @Test(arguments: [true, false])
  func recordsEvictedInFlightShareTheirBatchsOutcome(delivered: Bool) throws {
    let directory = TemporaryDirectory()
    let outbox = try Outbox(directory: directory.url, configuration: OutboxConfiguration(maximumRecords: 10))
    for index in 0..<10 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    let batch = outbox.readForSending(maximumRecords: 4)
    // Six more records evict the four in flight and two waiting ones.
    for index in 10..<16 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    #expect(outbox.stats.dropped[.outboxFull] == 2)
    #expect(outbox.stats.records + 2 == 16, "the four in flight still wait for their outcome")
    var acknowledged = 0
    if delivered {
      acknowledged = outbox.acknowledge(through: batch.last!.end)
      #expect(acknowledged == 4)
      #expect(outbox.stats.dropped[.outboxFull] == 2)
    } else {
      outbox.endInFlight()
      #expect(outbox.stats.dropped[.outboxFull] == 6)
    }
    let dropped = outbox.stats.dropped.values.reduce(0, +)
    #expect(acknowledged + dropped + outbox.stats.records == 16)
    #expect(outbox.read(maximumRecords: 100).map(index(of:)) == Array(6..<16))
  }

  /// A batch read for sending is in flight from the read on (one step): records evicted before the
  /// request is even built share its outcome; cut to fewer records, the evicted ones beyond the cut
  /// are dropped at once. received = delivered + dropped + queued at every step, exactly.
  @Test func theInFlightSplitIsExactFromTheRead() throws {
    let directory = TemporaryDirectory()
    let outbox = try Outbox(directory: directory.url, configuration: OutboxConfiguration(maximumRecords: 10))
    for index in 0..<10 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    let read = outbox.readForSending(maximumRecords: 6)
    // Five more evict records 0...4, all read, before the request is built.
    for index in 10..<15 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    #expect(outbox.stats.dropped[.outboxFull] == nil)
    // The format cuts the batch to four: evicted record 4 is beyond it, dropped now.
    outbox.narrowInFlight(to: read[3].end)
    #expect(outbox.stats.dropped[.outboxFull] == 1)
    let delivered = outbox.acknowledge(through: read[3].end)
    #expect(delivered == 4, "records 0...3 went out in the request and count as delivered")
    let dropped = outbox.stats.dropped.values.reduce(0, +)
    #expect(delivered + dropped + outbox.stats.records == 15)
    #expect(outbox.read(maximumRecords: 100).map(index(of:)) == Array(5..<15))
  }

  @Test func byteLimitsCutABatchButNeverBelowOneRecord() throws {
    let directory = TemporaryDirectory()
    let outbox = try Outbox(directory: directory.url)
    for index in 0..<10 { outbox.append(kind: 1, timestamp: 0, payload: payload(index, size: 100)) }
    #expect(outbox.read(maximumRecords: 100, maximumBytes: 350).count == 3)
    #expect(outbox.read(maximumRecords: 100, maximumBytes: 10).count == 1)
  }

  @Test func everythingSurvivesReopeningAndTheCursorToo() throws {
    let directory = TemporaryDirectory()
    let configuration = OutboxConfiguration(segmentBytes: 4096)
    do {
      let outbox = try Outbox(directory: directory.url, configuration: configuration)
      for index in 0..<500 { outbox.append(kind: 2, timestamp: Int64(index), payload: payload(index)) }
      let delivered = outbox.read(maximumRecords: 123)
      outbox.acknowledge(through: delivered.last!.end)
    }
    let reopened = try Outbox(directory: directory.url, configuration: configuration)
    let rest = reopened.read(maximumRecords: 1000)
    #expect(rest.map(index(of:)) == Array(123..<500))
    #expect(reopened.stats.records == 377)
    // New records follow the recovered ones.
    reopened.append(kind: 2, timestamp: 0, payload: payload(500))
    #expect(reopened.read(maximumRecords: 1000).map(index(of:)).last == 500)
  }

  @Test func deliveredSegmentsAreDeletedAndOnlyOwnFilesAreTouched() throws {
    let directory = TemporaryDirectory()
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    let foreign = directory.url.appendingPathComponent("notes.txt")
    try Data("keep me".utf8).write(to: foreign)
    let lookalike = directory.url.appendingPathComponent("segment-backup.ctq")
    try Data("keep me too".utf8).write(to: lookalike)
    let outbox = try Outbox(directory: directory.url, configuration: OutboxConfiguration(segmentBytes: 4096))
    for index in 0..<300 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    let segmentsBefore = try segmentFiles(directory.url).count
    #expect(segmentsBefore > 3)
    outbox.acknowledge(through: outbox.read(maximumRecords: 300).last!.end)
    #expect(try segmentFiles(directory.url).count == 1)
    #expect(outbox.stats.records == 0)
    #expect(FileManager.default.fileExists(atPath: foreign.path))
    #expect(FileManager.default.fileExists(atPath: lookalike.path))
  }

  @Test(arguments: [1, 7, 20, 33])
  func aTruncatedSegmentKeepsEverythingBeforeTheCut(cutBytes: Int) throws {
    let directory = TemporaryDirectory()
    do {
      let outbox = try Outbox(directory: directory.url)
      for index in 0..<50 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    }
    let segment = try #require(try segmentFiles(directory.url).first)
    // Cut into the last record: the file ends `cutBytes` into record 49.
    let recordSize = Outbox.recordSize(40)
    let cut = Outbox.segmentHeaderSize + 49 * recordSize + cutBytes
    let handle = try FileHandle(forUpdating: segment)
    try handle.truncate(atOffset: UInt64(cut))
    try handle.close()
    let reopened = try Outbox(directory: directory.url)
    #expect(reopened.read(maximumRecords: 100).map(index(of:)) == Array(0..<49))
    reopened.append(kind: 2, timestamp: 0, payload: payload(99))
    #expect(reopened.read(maximumRecords: 100).map(index(of:)).suffix(2) == [48, 99])
  }

  @Test(arguments: [0, 1, 2, 3])
  func garbageAfterTheLastRecordIsIgnored(seed: UInt64) throws {
    let directory = TemporaryDirectory()
    do {
      let outbox = try Outbox(directory: directory.url)
      for index in 0..<20 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    }
    let segment = try #require(try segmentFiles(directory.url).first)
    var generator = SeededRandom(seed: seed)
    let garbage = (0..<200).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
    let handle = try FileHandle(forUpdating: segment)
    try handle.seek(toOffset: UInt64(Outbox.segmentHeaderSize + 20 * Outbox.recordSize(40)))
    try handle.write(contentsOf: Data(garbage))
    try handle.close()
    let reopened = try Outbox(directory: directory.url)
    #expect(reopened.read(maximumRecords: 100).map(index(of:)) == Array(0..<20))
  }

  @Test func aCorruptedRecordInTheMiddleKeepsWhatCameBefore() throws {
    let directory = TemporaryDirectory()
    do {
      let outbox = try Outbox(directory: directory.url)
      for index in 0..<20 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    }
    let segment = try #require(try segmentFiles(directory.url).first)
    let handle = try FileHandle(forUpdating: segment)
    try handle.seek(toOffset: UInt64(Outbox.segmentHeaderSize + 10 * Outbox.recordSize(40) + 30))
    try handle.write(contentsOf: Data([0xff]))
    try handle.close()
    let reopened = try Outbox(directory: directory.url)
    #expect(reopened.read(maximumRecords: 100).map(index(of:)) == Array(0..<10))
  }

  @Test func theRecordBoundDropsTheOldestAndCountsThem() throws {
    let directory = TemporaryDirectory()
    let outbox = try Outbox(directory: directory.url, configuration: OutboxConfiguration(maximumRecords: 100))
    for index in 0..<250 { outbox.append(kind: 2, timestamp: 0, payload: payload(index)) }
    #expect(outbox.read(maximumRecords: 1000).map(index(of:)) == Array(150..<250))
    #expect(outbox.stats.dropped[.outboxFull] == 150)
    #expect(outbox.stats.records == 100)
  }

  @Test func theByteBoundKeepsTheFilesWithinItAndCountsExactly() throws {
    let directory = TemporaryDirectory()
    let configuration = OutboxConfiguration(maximumBytes: 5 * 4096, maximumRecords: 1_000_000, segmentBytes: 4096)
    let outbox = try Outbox(directory: directory.url, configuration: configuration)
    let total = 20_000
    for index in 0..<total {
      outbox.append(kind: 2, timestamp: 0, payload: payload(index))
      if index % 1000 == 0 {
        #expect(try diskBytes(directory.url) <= configuration.maximumBytes)
      }
    }
    let kept = outbox.read(maximumRecords: total)
    let dropped = outbox.stats.dropped[.outboxFull] ?? 0
    #expect(kept.count + dropped == total)
    #expect(kept.map(index(of:)) == Array(dropped..<total))
    #expect(try diskBytes(directory.url) <= configuration.maximumBytes)
  }

  @Test func recordsLargerThanASegmentAreRefusedAndCounted() throws {
    let directory = TemporaryDirectory()
    let outbox = try Outbox(directory: directory.url, configuration: OutboxConfiguration(segmentBytes: 4096))
    #expect(!outbox.append(kind: 2, timestamp: 0, payload: [UInt8](repeating: 1, count: 5000)))
    #expect(!outbox.append(kind: 2, timestamp: 0, payload: []))
    #expect(outbox.stats.dropped[.recordTooLarge] == 1)
  }
}

func segmentFiles(_ directory: URL) throws -> [URL] {
  try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
    .filter { $0.lastPathComponent.hasPrefix("segment-") && $0.lastPathComponent.count == 28 }
    .sorted { $0.lastPathComponent < $1.lastPathComponent }
}

func diskBytes(_ directory: URL) throws -> Int {
  try segmentFiles(directory).reduce(0) { total, url in
    total + ((try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? 0)
  }
}
