import CoreTracker
import Foundation
import TestSupport
import Testing

@testable import Delivery
@testable import ServiceSupport

private let contextA = Array(#"{"appName":"Trendyol","appVersion":"7.1","locale":"tr_TR"}"#.utf8)
private let contextB = Array(#"{"appName":"Trendyol","appVersion":"7.2","locale":"tr_TR"}"#.utf8)

private func contextFiles(_ store: RecordContexts) throws -> [String] {
  try FileManager.default.contentsOfDirectory(atPath: store.directory.path).filter { $0.hasSuffix(".ctx") }.sorted()
}

private func records(_ payloads: [[UInt8]]) -> ArraySlice<OutboxRecord> {
  ArraySlice(
    payloads.enumerated().map { index, payload in
      OutboxRecord(
        kind: 2, timestamp: 0, payload: payload, end: OutboxPosition(segment: 0, offset: index + 1))
    })
}

@Suite("Record contexts")
struct RecordContextsTests {
  @Test func aContextIsStoredOnceAndRecordsReferenceIt() throws {
    let directory = TemporaryDirectory()
    let store = RecordContexts(directory: directory.url)
    let first = RecordFraming.frame(prefix: store.prefix(for: contextA), body: Array("one".utf8))
    let second = RecordFraming.frame(prefix: store.prefix(for: contextA), body: Array("two".utf8))
    #expect(try contextFiles(store).count == 1)
    // Marker, hash, body: the context is not repeated.
    #expect(first.count == 10 + 3)
    #expect(RecordFraming.reference(first) != nil)
    #expect(Array(RecordFraming.body(second)) == Array("two".utf8))
    #expect(store.context(of: first) == contextA)
    #expect(RecordFraming.context(first).isEmpty)
  }

  @Test func anotherStoreOnTheSameDirectoryResolvesAfterARestart() throws {
    let directory = TemporaryDirectory()
    let record = RecordFraming.frame(
      prefix: RecordContexts(directory: directory.url).prefix(for: contextB), body: Array("{}".utf8))
    let reopened = RecordContexts(directory: directory.url)
    #expect(reopened.context(of: record) == contextB)
  }

  @Test func inlineRecordsWrittenBeforeReferencesStillRead() throws {
    let directory = TemporaryDirectory()
    let store = RecordContexts(directory: directory.url)
    let old = RecordFraming.frame(context: contextA, body: Array("{}".utf8))
    #expect(RecordFraming.reference(old) == nil)
    #expect(store.context(of: old) == contextA)
    #expect(Array(RecordFraming.body(old)) == Array("{}".utf8))
  }

  @Test func aMissingOrAlteredFileResolvesToNothing() throws {
    let directory = TemporaryDirectory()
    let record = RecordFraming.frame(
      prefix: RecordContexts(directory: directory.url).prefix(for: contextA), body: Array("{}".utf8))
    let name = try #require(try contextFiles(RecordContexts(directory: directory.url)).first)
    let file = directory.url.appendingPathComponent(name)
    try Data(contextB).write(to: file)
    #expect(RecordContexts(directory: directory.url).context(of: record) == nil)
    try FileManager.default.removeItem(at: file)
    #expect(RecordContexts(directory: directory.url).context(of: record) == nil)
  }

  @Test func anUnwritableDirectoryFallsBackToInlineContexts() throws {
    let directory = TemporaryDirectory()
    // A file where the directory should be: nothing can be stored there.
    let blocked = directory.url.appendingPathComponent("contexts")
    try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
    try Data("not a directory".utf8).write(to: blocked)
    let store = RecordContexts(directory: blocked)
    let record = RecordFraming.frame(prefix: store.prefix(for: contextA), body: Array("{}".utf8))
    #expect(RecordFraming.reference(record) == nil)
    #expect(store.context(of: record) == contextA)
  }

  @Test func openingKeepsTheNewestFiles() throws {
    let directory = TemporaryDirectory()
    let store = RecordContexts(directory: directory.url, keeping: 3)
    var records: [[UInt8]] = []
    for version in 0..<5 {
      let context = Array(#"{"appVersion":"\#(version)"}"#.utf8)
      records.append(RecordFraming.frame(prefix: store.prefix(for: context), body: []))
      // Distinct modification times, oldest first.
      let name = String(format: "%016llx.ctx", RecordContexts.hash(context))
      try FileManager.default.setAttributes(
        [.modificationDate: Date(timeIntervalSince1970: 1_000_000 + Double(version) * 60)],
        ofItemAtPath: directory.url.appendingPathComponent(name).path)
    }
    let reopened = RecordContexts(directory: directory.url, keeping: 3)
    #expect(try contextFiles(reopened).count == 3)
    #expect(records.map { reopened.context(of: $0) != nil } == [false, false, true, true, true])
  }

  @Test func batchesNeverMixContexts() throws {
    let directory = TemporaryDirectory()
    let store = RecordContexts(directory: directory.url)
    let a = store.prefix(for: contextA)
    let b = store.prefix(for: contextB)
    let batch = records([
      RecordFraming.frame(prefix: a, body: [1]), RecordFraming.frame(prefix: a, body: [2]),
      RecordFraming.frame(prefix: b, body: [3]), RecordFraming.frame(context: contextA, body: [4]),
    ])
    #expect(RecordFraming.batchLength(batch) == 2)
    #expect(RecordFraming.batchLength(batch.dropFirst(2)) == 1)
    #expect(RecordFraming.batchLength(batch.dropFirst(3)) == 1)
  }
}
