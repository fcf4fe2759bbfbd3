import Foundation

/// A report table for a terminal: columns aligned, numbers right-aligned, a rule under the header.
extension ReportTable {
  /// The table as aligned text (cells longer than `maximumWidth` are cut with `…`).
  public func text(maximumWidth: Int = 60) -> String {
    let table = self
    func cut(_ text: String) -> String {
      let flat = text.replacingOccurrences(of: "\n", with: " ")
      return flat.count <= maximumWidth ? flat : String(flat.prefix(maximumWidth - 1)) + "…"
    }
    let rows = table.rows.map { $0.map(cut) }
    let header = table.columns.map(cut)
    var widths = header.map(\.count)
    for row in rows {
      for (index, cell) in row.enumerated() where index < widths.count {
        widths[index] = max(widths[index], cell.count)
      }
    }
    let numeric = widths.indices.map { index in
      !rows.isEmpty && rows.allSatisfy { index >= $0.count || $0[index].isEmpty || Double($0[index]) != nil }
    }
    func line(_ cells: [String]) -> String {
      let text = cells.enumerated().map { index, cell in
        let pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
        return numeric[index] ? pad + cell : cell + pad
      }.joined(separator: "  ")
      return String(text.reversed().drop(while: { $0 == " " }).reversed())
    }
    var lines = [line(header), widths.map { String(repeating: "─", count: $0) }.joined(separator: "  ")]
    lines += rows.map(line)
    return lines.joined(separator: "\n") + "\n"
  }
}
