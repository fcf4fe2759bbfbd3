public import CollectorStore
import GRDB

extension SQLiteEventStore {
  /// Erases a device, or a person (every device they own, and their events on shared devices: see
  /// ``ErasureSubject``), in one transaction, the rollups repaired.
  public func erase(_ subject: ErasureSubject) async throws -> ErasureReport {
    try await run { [pool] in
      try pool.write { db in
        var report = ErasureReport()
        var owned: [String] = subject.deviceID.map { [$0] } ?? []
        var shared: [String] = []
        // Every device with one of the person's events loses something; the named device counts if
        // it had anything.
        var erased = Set<ExactText>()
        if let user = subject.userID {
          let rows = try Row.fetchAll(
            db, sql: SQLiteSchema.persons.devicesOfUser, arguments: [subject.app, user])
          for row in rows {
            let device: String = row["device_id"]
            let first: String? = row["first_user"]
            if first?.hasSameBytes(as: user) == true { owned.append(device) } else { shared.append(device) }
            erased.insert(ExactText(device))
          }
          try db.execute(sql: "DELETE FROM events WHERE app = ? AND user_id = ?", arguments: [subject.app, user])
          report.events += db.changesCount
        }
        for device in owned.distinctBytes() {
          try db.execute(sql: "DELETE FROM events WHERE app = ? AND device_id = ?", arguments: [subject.app, device])
          let events = db.changesCount
          try db.execute(sql: "DELETE FROM counters WHERE app = ? AND device_id = ?", arguments: [subject.app, device])
          let counters = db.changesCount
          try db.execute(sql: "DELETE FROM persons WHERE app = ? AND device_id = ?", arguments: [subject.app, device])
          try db.execute(
            sql: "DELETE FROM \(SQLiteSchema.deviceSets.tables.numbers) WHERE app = ? AND device_id = ?",
            arguments: [subject.app, device])
          report.events += events
          report.counters += counters
          if events + counters > 0 { erased.insert(ExactText(device)) }
        }
        for device in (owned + shared).distinctBytes() {
          try Self.refreshRollups(
            db, "app = ?1 AND device_id = ?2", "app = ?1 AND device_id = ?2", [subject.app, device])
        }
        report.devices = erased.count
        return report
      }
    }
  }
}
