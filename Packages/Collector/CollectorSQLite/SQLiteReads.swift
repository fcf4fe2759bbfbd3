import CollectorStore
import GRDB
import GRDBSQLite

extension SQLiteRows {
  /// The rows of a report query, read with SQLite's C API on a GRDB statement: each value is made
  /// once, straight into the report's ``SQLRow`` (GRDB's `Row.fetchAll` copies every row into a row
  /// of its own first, which cost more than SQLite's work for large reads such as a funnel's step
  /// events).
  static func read(_ db: Database, sql: String, arguments: [SQLValue]) throws -> [SQLRow] {
    var rows: [SQLRow] = []
    try each(db, sql: sql, arguments: arguments) { statement, columns in
      var values: [SQLValue] = []
      values.reserveCapacity(columns.count)
      for index in columns.indices { values.append(value(statement, Int32(index))) }
      rows.append(SQLRow(columns: columns, values: values))
    }
    return rows
  }

  /// A funnel's step events (device id, name, time in ms, event id, in that order) straight into
  /// columns: no row, and no string but the device's and the name's, freed once looked up.
  static func readSteps(_ db: Database, sql: String, arguments: [SQLValue]) throws -> StepEventColumns {
    var found = StepEventColumns()
    try each(db, sql: sql, arguments: arguments) { statement, _ in
      found.append(
        device: text(statement, 0), name: text(statement, 1), time: sqlite3_column_int64(statement, 2),
        id: UnsafeRawBufferPointer(
          start: sqlite3_column_blob(statement, 3), count: Int(sqlite3_column_bytes(statement, 3))))
    }
    return found
  }

  /// Runs `sql` with `arguments` bound and calls `row` with the statement on each result row and
  /// the result's column names, read with SQLite's C API on a GRDB statement.
  static func each(
    _ db: Database, sql: String, arguments: [SQLValue], _ row: (SQLiteStatement, [String]) -> Void
  ) throws {
    let prepared = try db.makeStatement(sql: sql)
    // The statement is finalised when `prepared` goes: it must outlive every use of its pointer.
    try withExtendedLifetime(prepared) {
      let statement = prepared.sqliteStatement
      var binder = Binder(statement)
      binder.start()
      for argument in arguments { binder.value(argument) }
      defer { sqlite3_reset(statement) }
      let columns = (0..<sqlite3_column_count(statement)).map { String(cString: sqlite3_column_name(statement, $0)) }
      while true {
        let code = sqlite3_step(statement)
        if code == SQLITE_DONE { return }
        guard code == SQLITE_ROW else {
          let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
          throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
        }
        row(statement, columns)
      }
    }
  }

  /// Column `index` of the current row as text (empty for `NULL`).
  private static func text(_ statement: SQLiteStatement, _ index: Int32) -> String {
    guard let bytes = sqlite3_column_blob(statement, index) else { return "" }
    return String(
      decoding: UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))), as: UTF8.self)
  }

  /// Column `index` of the current row.
  static func value(_ statement: SQLiteStatement, _ index: Int32) -> SQLValue {
    switch sqlite3_column_type(statement, index) {
    case SQLITE_INTEGER: .int(sqlite3_column_int64(statement, index))
    case SQLITE_FLOAT: .double(sqlite3_column_double(statement, index))
    case SQLITE_NULL: .null
    default:
      // Text, or a blob read as UTF-8 text (as ``value(_:)`` reads one).
      if let bytes = sqlite3_column_blob(statement, index) {
        .text(
          String(
            decoding: UnsafeRawBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, index))),
            as: UTF8.self))
      } else {
        .text("")
      }
    }
  }
}
