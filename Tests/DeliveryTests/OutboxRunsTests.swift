import CoreTracker
import Foundation
import TestSupport
import Testing

@testable import Delivery

private func record(_ index: Int) -> [UInt8] { Array("record-\(index)".utf8) }

private func indices(_ outbox: Outbox) -> [Int] {
  outbox.read(maximumRecords: 10_000).map { Int(String(decoding: $0.payload, as: UTF8.self).split(separator: "-")[1])! }
}

/// Several processes on one folder: each run has an outbox of its own, held while it lives, and
/// adopts what dead runs left.
@Suite("Outbox runs")
struct OutboxRunsTests {
  @Test func aSecondOutboxOnAFolderInUseIsRefused() throws {
    let directory = TemporaryDirectory()
    do {
      let first = try Outbox(directory: directory.url)
      #expect(first.append(kind: 1, timestamp: 1, payload: record(1)))
      #expect(throws: FileError.self) { try Outbox(directory: directory.url) }
    }
    // Released, the folder opens again with what it holds.
    #expect(indices(try Outbox(directory: directory.url)) == [1])
  }

  @Test func aNewRunAdoptsTheUndeliveredRecordsOfEndedRunsInOrder() throws {
    let directory = TemporaryDirectory()
    do {
      let (ended, adopted) = try Outbox.openRun(in: directory.url)
      #expect(adopted == 0)
      for index in 0..<10 { ended.append(kind: 1, timestamp: Int64(index), payload: record(index)) }
      ended.acknowledge(through: ended.read(maximumRecords: 4).last!.end)  // 0..<4 delivered
    }
    let (live, _) = try Outbox.openRun(in: directory.url)
    #expect(indices(live) == Array(4..<10))
    live.append(kind: 1, timestamp: 10, payload: record(10))

    // A run that is still open is not adopted; once it ends, the next run takes its records.
    let (other, adoptedWhileLive) = try Outbox.openRun(in: directory.url)
    #expect(adoptedWhileLive == 0)
    #expect(indices(other).isEmpty)
    let runs = directory.url.appendingPathComponent("runs")
    #expect(try FileManager.default.contentsOfDirectory(atPath: runs.path).count == 2)
    _ = live
  }

  @Test func anEndedRunIsAdoptedOnceAndItsFolderDeleted() throws {
    let directory = TemporaryDirectory()
    do {
      let (ended, _) = try Outbox.openRun(in: directory.url)
      for index in 0..<3 { ended.append(kind: 1, timestamp: Int64(index), payload: record(index)) }
    }
    let (first, adopted) = try Outbox.openRun(in: directory.url)
    #expect(adopted == 3)
    let runs = directory.url.appendingPathComponent("runs")
    #expect(try FileManager.default.contentsOfDirectory(atPath: runs.path) == [first.directory.lastPathComponent])
    let (second, adoptedAgain) = try Outbox.openRun(in: directory.url)
    #expect(adoptedAgain == 0)
    #expect(indices(second).isEmpty)
  }

  @Test func anOutboxKeptDirectlyInTheFolderByAnEarlierVersionIsAdopted() throws {
    let directory = TemporaryDirectory()
    do {
      let legacy = try Outbox(directory: directory.url)
      for index in 0..<5 { legacy.append(kind: 1, timestamp: Int64(index), payload: record(index)) }
    }
    try Data("keep".utf8).write(to: directory.url.appendingPathComponent("other-file"))
    let (run, adopted) = try Outbox.openRun(in: directory.url)
    #expect(adopted == 5)
    #expect(indices(run) == Array(0..<5))
    let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).sorted()
    #expect(left == ["other-file", "runs"])
  }
}
