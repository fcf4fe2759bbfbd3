/// Who is a person, in SQL (SQLite and PostgreSQL): the `persons` table maps each identified device
/// to the first user it was identified as, by event time (ties broken by event id). A device never
/// identified has no row and is a person of its own. Stores keep the table in the transaction that
/// writes the events revealing it; reports count people through it (``people(from:)``).
public struct PersonSQL: Sendable {
  /// The events table's qualified name.
  public let events: String
  /// The persons table's qualified name.
  public let persons: String
  /// The store's dialect.
  public let dialect: any SQLDialect

  /// The SQL for one store.
  public init(events: String, persons: String, dialect: any SQLDialect) {
    self.events = events
    self.persons = persons
    self.dialect = dialect
  }

  /// `CREATE TABLE` of the mapping.
  public var create: String {
    """
    CREATE TABLE \(persons) (
      app TEXT NOT NULL, device_id TEXT NOT NULL, person TEXT NOT NULL, first_ms BIGINT NOT NULL,
      first_event TEXT NOT NULL, PRIMARY KEY (app, device_id)
    )
    """
  }

  /// Adds or moves earlier the mapping of every device identified in the events of `source` that
  /// match `condition` (a table, or an insert's returned rows; its time column named by
  /// `time`, in ms).
  public func upsert(from source: String, where condition: String, time: String) -> String {
    let (target, current) = dialect.upsertTarget(persons)
    return """
      INSERT INTO \(target) (app, device_id, person, first_ms, first_event)
      SELECT app, device_id, user_id, t, event_id FROM (
        SELECT app, device_id, user_id, \(time) AS t, event_id,
          row_number() OVER (PARTITION BY app, device_id ORDER BY \(time), event_id) AS n
        FROM \(source) WHERE user_id IS NOT NULL AND \(condition)
      ) firsts WHERE n = 1
      ON CONFLICT (app, device_id) DO UPDATE SET
        person = excluded.person, first_ms = excluded.first_ms, first_event = excluded.first_event
      WHERE (excluded.first_ms, excluded.first_event) < (\(current).first_ms, \(current).first_event)
      """
  }

  /// The devices with an event of user `$2` in app `$1`, each with its first identified user by
  /// event time: a device whose first user is `$2` belongs to that person (erasure reads the events,
  /// not the mapping, so it is exact even for rows written before the mapping existed).
  public var devicesOfUser: String {
    let (app, user) = (dialect.placeholder(1), dialect.placeholder(2))
    return """
      SELECT c.device_id AS device_id,
        (SELECT f.user_id FROM \(events) f WHERE f.app = c.app AND f.device_id = c.device_id AND f.user_id IS NOT NULL
         ORDER BY f.occurred_at, f.event_id LIMIT 1) AS first_user
      FROM (SELECT DISTINCT app, device_id FROM \(events) WHERE app = \(app) AND user_id = \(user)) c
      ORDER BY c.device_id
      """
  }

  /// The devices of `devices`, a query of distinct `app, device_id` (of one app), and the distinct
  /// people among them.
  public func people(from devices: String) -> String {
    "SELECT count(*) AS devices, count(DISTINCT unit_id) AS people FROM (\(Self.units(of: devices, persons: persons))) u"
  }

  /// The rows of `devices` (a query with `app` and `device_id` columns), each with its `unit_id`,
  /// its person's: `u:` and the person of the device in `persons`, or `d:` and a device never
  /// identified.
  public static func units(of devices: String, persons: String) -> String {
    "SELECT d.*, coalesce('u:' || p.person, 'd:' || d.device_id) AS unit_id FROM (\(devices)) d "
      + "LEFT JOIN \(persons) p ON p.app = d.app AND p.device_id = d.device_id"
  }
}
