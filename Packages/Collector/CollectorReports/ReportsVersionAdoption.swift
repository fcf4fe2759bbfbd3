import CollectorStore
import CollectorWire
import Foundation

/// Devices per app version per day: how fast a release reaches its users, and which versions are
/// still in use. A report declared in one file over ``ReportQuery`` (see `Docs/Extending.md`).
public struct VersionAdoption: ReportResult, Hashable {
  /// One day and app version.
  public struct Point: Sendable, Hashable, Codable {
    /// The day's first millisecond (UTC).
    public var day: Int64
    /// The app version.
    public var appVersion: String
    /// Distinct devices that sent events from this version that day.
    public var devices: Int64
    /// `devices` as a share of the day's devices of every version, in percent.
    public var share: Double
  }

  /// The points, by day (oldest first), then by version (newest first, in version order).
  public var points: [Point]

  public var table: ReportTable {
    ReportTable(
      columns: ["day", "app version", "devices", "share"],
      rows: points.map {
        [ReportTime.iso($0.day), $0.appVersion, String($0.devices), String(format: "%.1f", $0.share)]
      })
  }
}

extension ReportEngine {
  /// Devices per app version per day (of the filter's zone) over the range (at most 400 days).
  public func versionAdoption(_ filter: ReportFilter) async throws -> VersionAdoption {
    let day = ReportBucket.day
    guard (filter.to - filter.from) / day.milliseconds <= 400 else {
      throw FieldError(field: "to", reason: "version adoption covers at most 400 days")
    }
    let query = try ReportQuery(
      filter, by: [.bucket(day), .context(.appVersion)], measuring: [.devices], order: .dimensions)
    let rows = try await aggregate(query).map { row in
      (
        day: filter.zone.start(of: row[query.column(of: 0)].int ?? 0, day),
        version: row[query.column(of: 1)].text ?? "",
        devices: row[.devices]
      )
    }
    // A device that updated within a day counts for both versions: shares are of the day's sum.
    let perDay = Dictionary(grouping: rows, by: \.day).mapValues { $0.reduce(0) { $0 + $1.devices } }
    let points = rows.map { row in
      let total = perDay[row.day] ?? 0
      return VersionAdoption.Point(
        day: row.day, appVersion: row.version, devices: row.devices,
        share: total == 0 ? 0 : Double(row.devices) * 100 / Double(total))
    }
    return VersionAdoption(
      points: points.sorted {
        $0.day != $1.day ? $0.day < $1.day : SemanticVersion($0.appVersion) > SemanticVersion($1.appVersion)
      })
  }
}
