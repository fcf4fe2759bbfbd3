import CollectorWire
import Hummingbird

/// The form a report-like answer was asked for: JSON (the default) or CSV, from `format=` or an
/// `Accept: text/csv` header. Any other `format` is a 400 naming the field, before any work is done.
enum AnswerFormat {
  case json
  case csv

  /// The format `request` asks for.
  init(_ request: Request) throws {
    switch request.form.get("format") {
    case nil, "":
      self = request.headers[.accept]?.contains("text/csv") ?? false ? .csv : .json
    case "json": self = .json
    case "csv": self = .csv
    default: throw FieldError(field: "format", reason: "is json or csv")
    }
  }
}
