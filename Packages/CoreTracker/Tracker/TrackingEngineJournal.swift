import Foundation

/// The worker's reading of the journal and its waiting for room: events that wait in the journal
/// alone are read back in chunks; an event whose services have no room holds the worker back.
extension TrackingEngine {
  /// Reads journaled records back in chunks, handles them in order, and commits after each chunk.
  /// An event whose services have no room holds the worker back: it lets the journal have the
  /// chunk again (`release`), waits, and reads on from that event.
  func handleJournaled(_ range: Range<UInt64>) {
    guard let queue else { return }
    var next = range.lowerBound
    reading: while next < range.upperBound, !abandoned {
      let (bodies, after) = queue.readJournal(range, from: next, maximum: EventQueue.checkpointInterval)
      guard !bodies.isEmpty else { return }
      let first = after - UInt64(bodies.count)
      for (offset, body) in bodies.enumerated() {
        guard let command = decode(body) else { continue }
        if holdsBack, case .replayed(let event, _, _) = command, !roomFor(event.services) {
          let sequence = first + UInt64(offset)
          publishStats(then: .release(sequence))
          guard waitForRoom(event.services) else { return }
          next = sequence
          continue reading
        }
        handle(command)
        if abandoned { return }
      }
      next = after
      publishStats(then: .commit(after))
    }
  }

  /// One journal record as a command; a damaged one is counted (and dropped, if it was an event).
  func decode(_ body: [UInt8]) -> EventQueue.Command? {
    let command = body.withUnsafeBytes { bytes -> EventQueue.Command? in
      var reader = JournalReader(bytes)
      guard let command = try? reader.command(), reader.isAtEnd else { return nil }
      return command
    }
    if command == nil {
      delta.damaged += 1
      if body.first == JournalFormat.Record.track.rawValue {
        delta.handled += 1
        drop(.journalDamaged)
      }
    }
    return command
  }

  /// Whether every service `selection` names (and consent allows) has room for one more event.
  func roomFor(_ selection: ServiceSelection) -> Bool {
    consent.isOptedOut
      || services.allSatisfy { !selection.contains($0.id) || !consent.allows($0.id) || $0.hasRoom() }
  }

  /// Waits until the services `selection` names have room. Returns `false` when the queue closed
  /// meanwhile (the worker gives up; the journal keeps the rest).
  func waitForRoom(_ selection: ServiceSelection) -> Bool {
    guard let queue else { return true }
    publishStats()
    while !roomFor(selection) {
      refreshConsent()  // a service the user just denied holds nothing back any more
      if roomFor(selection) { break }
      guard queue.waitForRoom() else {
        abandoned = true
        return false
      }
    }
    return true
  }
}
