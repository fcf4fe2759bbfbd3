import CollectorStore
import GRDB
import GRDBSQLite

extension SQLiteRows {
  /// The rows of a report query, read with SQLite's C API on a GRDB statement: each value is made
  /// once, straight into the report's ``SQLRow`` (GRDB's `Row.fetchAll` copies every row into a row
  /// of its own first, which cost more than SQLite's work for large reads such as a funnel's step
  /// events).
  static func read(_ db: Database, sql: String, arguments: [SQLValue]) throws -> [SQLRow] {
    let prepared = try db.makeStatement(sql: sql)
    // The statement is finalised when `prepared` goes: it must outlive every use of its pointer.
    return try withExtendedLifetime(prepared) {
      let statement = prepared.sqliteStatement
      var binder = Binder(statement)
      binder.start()
      for argument in arguments { binder.value(argument) }
      defer { sqlite3_reset(statement) }
      let width = sqlite3_column_count(statement)
      let columns = (0..<width).map { String(cString: sqlite3_column_name(statement, $0)) }
      var rows: [SQLRow] = []
      while true {
        let code = sqlite3_step(statement)
        if code == SQLITE_DONE { return rows }
        guard code == SQLITE_ROW else {
          let message = String(cString: sqlite3_errmsg(db.sqliteConnection))
          throw DatabaseError(resultCode: ResultCode(rawValue: code), message: message, sql: sql)
        }
        var values: [SQLValue] = []
        values.reserveCapacity(Int(width))
        for index in 0..<width { values.append(value(statement, index)) }
        rows.append(SQLRow(columns: columns, values: values))
      }
    }
  }

  /// Column `index` of the current row.
  private static func value(_ statement: SQLiteStatement, _ index: Int32) -> SQLValue {
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
