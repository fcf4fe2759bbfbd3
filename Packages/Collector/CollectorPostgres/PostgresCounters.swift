import CollectorStore

extension PostgresTables {
  /// One row per counter id, the largest count (what keep-the-larger would leave), in first-seen
  /// order: PostgreSQL refuses an upsert that touches one row twice.
  static func largestPerID(_ counters: [StoredCounter]) -> [StoredCounter] {
    var position: [String: Int] = [:]
    var result: [StoredCounter] = []
    for counter in counters {
      let key = "\(counter.app.utf8.count):\(counter.app)\(counter.counterID)"
      if let index = position[key] {
        if counter.count > result[index].count { result[index] = counter }
      } else {
        position[key] = result.count
        result.append(counter)
      }
    }
    return result
  }
}
