public import CollectorStore
import PostgresNIO

extension PostgresEventStore {
  /// Erases a device, or a person (every device they own, and their events on shared devices: see
  /// ``ErasureSubject``), in one transaction, the rollups repaired.
  public func erase(_ subject: ErasureSubject) async throws -> ErasureReport {
    try await guarded {
      try await client.withTransaction(logger: logger) { connection in
        var report = ErasureReport()
        var owned: [String] = subject.deviceID.map { [$0] } ?? []
        var shared: [String] = []
        var erased = Set<ExactText>()
        if let user = subject.userID {
          var binds = PostgresBindings()
          binds.append(subject.app)
          binds.append(user)
          let found = try await connection.query(
            PostgresQuery(unsafeSQL: tables.persons.devicesOfUser, binds: binds),
            logger: logger)
          for try await (device, first) in found.decode((String, String?).self) {
            if first?.hasSameBytes(as: user) == true { owned.append(device) } else { shared.append(device) }
            erased.insert(ExactText(device))
          }
          report.events += try await Self.deleted(
            connection, "DELETE FROM \(tables.events) WHERE app = $1 AND user_id = $2", [subject.app, user], logger)
        }
        for device in owned.distinctBytes() {
          let events = try await Self.deleted(
            connection, "DELETE FROM \(tables.events) WHERE app = $1 AND device_id = $2", [subject.app, device], logger)
          let counters = try await Self.deleted(
            connection, "DELETE FROM \(tables.counters) WHERE app = $1 AND device_id = $2", [subject.app, device],
            logger)
          _ = try await Self.deleted(
            connection, "DELETE FROM \(tables.persons.persons) WHERE app = $1 AND device_id = $2",
            [subject.app, device],
            logger)
          report.events += events
          report.counters += counters
          if events + counters > 0 { erased.insert(ExactText(device)) }
        }
        let oneDevice = "app = $1 AND device_id = $2"
        for device in (owned + shared).distinctBytes() {
          try await refreshRollups(connection, oneDevice, oneDevice, [subject.app, device])
        }
        // After the refresh took the names rollup's write lock: no build is numbering devices now.
        for device in owned.distinctBytes() {
          _ = try await Self.deleted(
            connection, "DELETE FROM \(tables.deviceSets.tables.numbers) WHERE \(oneDevice)", [subject.app, device],
            logger)
        }
        report.devices = erased.count
        return report
      }
    }
  }
}
