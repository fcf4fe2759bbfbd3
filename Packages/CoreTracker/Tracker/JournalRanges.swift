/// Turning commands that wait in memory into ranges of the journal: what the queue does before the
/// journal drops records for the disk budget, and what the worker does with the rest of its batch
/// when a service without room holds it back. Afterwards those events wait in the journal alone, so
/// the journal may drop the oldest of them (each counted) and the worker reads the rest back.
enum JournalRanges {
  /// `commands` with every journaled one (its `sequences` entry not `.max`) replaced by journal
  /// ranges, neighbours merged; commands the journal does not hold (barriers, counters, events that
  /// could not be journaled) stay as they are, in order. The sequences returned are all `.max`
  /// except for such unjournaled commands (none of which has one).
  static func journalOnly(
    _ commands: ArraySlice<EventQueue.Command>, _ sequences: ArraySlice<UInt64>
  ) -> (commands: [EventQueue.Command], sequences: [UInt64]) {
    var converted: [EventQueue.Command] = []
    converted.reserveCapacity(16)
    for (command, sequence) in zip(commands, sequences) {
      let range: Range<UInt64>?
      if sequence != .max {
        range = sequence..<sequence + 1
      } else if case .journaled(let existing) = command {
        range = existing
      } else {
        range = nil
      }
      guard let range else {
        converted.append(command)
        continue
      }
      if case .journaled(let last) = converted.last, last.upperBound == range.lowerBound {
        converted[converted.count - 1] = .journaled(last.lowerBound..<range.upperBound)
      } else {
        converted.append(.journaled(range))
      }
    }
    return (converted, Array(repeating: .max, count: converted.count))
  }

  /// How many events wait in memory among `commands` (the queue's capacity counts them).
  static func eventsInMemory(_ commands: [EventQueue.Command]) -> Int {
    commands.reduce(0) { count, command in
      if case .track = command { return count + 1 }
      return count
    }
  }
}
