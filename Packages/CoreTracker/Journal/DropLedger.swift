import Foundation

/// The durable record of drops: counts by service and reason in the journal's header, written with
/// the drop (memory-mapped, so a `kill -9` right after keeps it), and what of them was already
/// reported to the services that carry diagnostics (the collector's).
///
/// A report moves in two steps so that it is sent once under one id whatever moment the process
/// dies at: ``beginReport(idPrefix:)`` writes the report (its id and amounts) as pending and counts
/// the amounts as reported; the worker hands it to the services (into their durable outboxes); then
/// ``endReport()`` clears it. A run that finds a pending report (its own, or adopted from a dead
/// run's journal) hands it again under the same id, which the collector de-duplicates.
///
/// Layout (offsets in the file): 128 the report sequence, 136 the pending flag, 144 the pending
/// report's id (a length byte and 63 bytes), 208 the slots: 40 of 96 bytes, each a service and a
/// reason (a length byte and 31 bytes each; the tracker itself is the empty service), then the
/// counted, reported and pending amounts. Past 40 pairs, counts go to the last slot.
///
/// Not thread-safe: used under the ``EventQueue``'s lock, like the journal.
final class DropLedger {
  /// One service and reason, and an amount.
  struct Entry: Hashable {
    var service: String
    var reason: String
    var count: Int
  }

  private struct Key: Hashable {
    let service: String
    let reason: String
  }

  private var base: UnsafeMutableRawPointer
  private var slots: [Key: Int] = [:]
  private var used = 0

  private static let sequenceOffset = JournalFormat.Header.ledger
  private static let pendingOffset = JournalFormat.Header.ledger + 8
  private static let idOffset = JournalFormat.Header.ledger + 16
  private static let firstSlot = JournalFormat.Header.ledger + 80
  private static let slotBytes = 96
  private static let slotCount = (JournalFormat.headerBytes - firstSlot) / slotBytes
  private static let textBytes = 31

  /// The ledger in the header at `base`; `fresh` clears it (a new journal).
  init(base: UnsafeMutableRawPointer, fresh: Bool = false) {
    self.base = base
    if fresh {
      (base + Self.sequenceOffset).initializeMemory(
        as: UInt8.self, repeating: 0, count: JournalFormat.headerBytes - Self.sequenceOffset)
    }
    for slot in 0..<Self.slotCount {
      let service = text(slot, 0)
      let reason = text(slot, 32)
      guard !reason.isEmpty else { break }
      slots[Key(service: service, reason: reason)] = slot
      used = slot + 1
    }
  }

  /// The file was mapped again (it grew).
  func rebase(_ base: UnsafeMutableRawPointer) { self.base = base }

  /// Counts `count` drops of `service` (empty: the tracker) for `reason`.
  func add(service: String, reason: String, count: Int) {
    guard count > 0 else { return }
    let slot = self.slot(Key(service: service, reason: reason))
    store(slot, 64, amount(slot, 64) + count)
  }

  /// Every count so far (reported or not).
  var totals: [Entry] {
    slots.map { Entry(service: $0.key.service, reason: $0.key.reason, count: amount($0.value, 64)) }
      .filter { $0.count > 0 }.sorted { ($0.service, $0.reason) < ($1.service, $1.reason) }
  }

  /// Whether drops wait to be reported.
  var hasUnreported: Bool { slots.values.contains { amount($0, 64) > amount($0, 72) } }

  /// The pending report, if one was begun and not ended (by this run or a dead one).
  var pending: (id: String, entries: [Entry])? {
    guard load(Self.pendingOffset) == 1 else { return nil }
    let entries = slots.compactMap { key, slot -> Entry? in
      let count = amount(slot, 80)
      return count > 0 ? Entry(service: key.service, reason: key.reason, count: count) : nil
    }
    return (readText(Self.idOffset), entries.sorted { ($0.service, $0.reason) < ($1.service, $1.reason) })
  }

  /// Writes what is unreported as the pending report and counts it as reported; `nil` when there is
  /// nothing to report or a report is pending already.
  func beginReport(idPrefix: String) -> (id: String, entries: [Entry])? {
    guard load(Self.pendingOffset) == 0, hasUnreported else { return nil }
    let sequence = load(Self.sequenceOffset) + 1
    writeText("\(idPrefix)-\(sequence)", at: Self.idOffset, limit: 63)
    for slot in slots.values {
      let unreported = amount(slot, 64) - amount(slot, 72)
      store(slot, 80, unreported)
      store(slot, 72, amount(slot, 64))
    }
    storeWord(sequence, at: Self.sequenceOffset)
    storeWord(1, at: Self.pendingOffset)
    return pending
  }

  /// The pending report reached the services.
  func endReport() {
    storeWord(0, at: Self.pendingOffset)
    for slot in slots.values { store(slot, 80, 0) }
  }

  /// Takes over a dead run's ledger: its unreported counts, and its pending report (kept pending
  /// under its id when this ledger has none, so it is sent once; counted as unreported otherwise).
  func adopt(_ other: DropLedger) {
    let otherPending = other.pending
    let takesPending = otherPending != nil && load(Self.pendingOffset) == 0
    for entry in other.unreported { add(service: entry.service, reason: entry.reason, count: entry.count) }
    guard let otherPending else { return }
    for entry in otherPending.entries {
      let slot = self.slot(Key(service: entry.service, reason: entry.reason))
      store(slot, 64, amount(slot, 64) + entry.count)
      if takesPending {
        store(slot, 72, amount(slot, 72) + entry.count)
        store(slot, 80, entry.count)
      }
    }
    if takesPending {
      writeText(otherPending.id, at: Self.idOffset, limit: 63)
      storeWord(1, at: Self.pendingOffset)
    }
  }

  private var unreported: [Entry] {
    slots.compactMap { key, slot in
      let count = amount(slot, 64) - amount(slot, 72)
      return count > 0 ? Entry(service: key.service, reason: key.reason, count: count) : nil
    }
  }

  // MARK: Bytes

  private func slot(_ key: Key) -> Int {
    if let slot = slots[key] { return slot }
    guard used < Self.slotCount else { return Self.slotCount - 1 }
    let slot = used
    used += 1
    writeText(key.service, at: Self.firstSlot + slot * Self.slotBytes, limit: Self.textBytes)
    writeText(key.reason, at: Self.firstSlot + slot * Self.slotBytes + 32, limit: Self.textBytes)
    slots[key] = slot
    return slot
  }

  private func amount(_ slot: Int, _ field: Int) -> Int {
    Int(clamping: load(Self.firstSlot + slot * Self.slotBytes + field))
  }

  private func store(_ slot: Int, _ field: Int, _ value: Int) {
    storeWord(UInt64(max(0, value)), at: Self.firstSlot + slot * Self.slotBytes + field)
  }

  private func load(_ offset: Int) -> UInt64 {
    UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
  }

  private func storeWord(_ value: UInt64, at offset: Int) {
    base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: UInt64.self)
  }

  private func text(_ slot: Int, _ field: Int) -> String {
    readText(Self.firstSlot + slot * Self.slotBytes + field)
  }

  private func readText(_ offset: Int) -> String {
    let count = Int(base.load(fromByteOffset: offset, as: UInt8.self))
    return String(decoding: UnsafeRawBufferPointer(start: base + offset + 1, count: min(count, 63)), as: UTF8.self)
  }

  /// Writes the text's bytes (cut to `limit`), then its length: a torn write reads as the old length.
  private func writeText(_ text: String, at offset: Int, limit: Int) {
    let bytes = Array(text.utf8.prefix(limit))
    bytes.withUnsafeBytes { buffer in
      if let source = buffer.baseAddress { (base + offset + 1).copyMemory(from: source, byteCount: buffer.count) }
    }
    base.storeBytes(of: UInt8(bytes.count), toByteOffset: offset, as: UInt8.self)
  }
}
