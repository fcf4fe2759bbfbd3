import CollectorReports
public import CollectorStore
import Foundation

extension Dashboard {
  /// The app's saved searches and reports: each opens from its link (`/dashboard/view/<id>`, to
  /// share), and its creator or an admin may rename or delete it. A view is changed by opening it,
  /// changing the filters and saving it again under its name.
  public static func saved(_ views: [SavedView], context: Context) -> String {
    guard !views.isEmpty else {
      let text =
        "<p class=\"empty\">Nothing saved for \(SVG.escape(context.app)) yet. Every page ends with a "
        + "<em>Save this view</em> form: it keeps the page with its filters under a name, for everyone "
        + "who reads this app.</p>"
      return page("Saved", body: card("Saved searches and reports", text), context: context)
    }
    var html = #"<div class="scroll"><table class="rows"><thead><tr><th>name</th><th>page</th><th>filters</th>"#
    html += "<th>saved by</th><th>changed</th><th></th></tr></thead><tbody>"
    for view in views {
      let link = "/dashboard/view/\(view.id)"
      html += #"<tr><td><a href="\#(link)">\#(SVG.escape(view.name))</a></td>"#
      html += "<td>\(SVG.escape(DashboardPage(path: view.path)?.title ?? view.path))</td>"
      html += #"<td class="wrap">\#(SVG.escape(view.query.replacingOccurrences(of: "&", with: " · ")))</td>"#
      html += "<td>\(SVG.escape(view.createdBy))</td><td>\(SVG.escape(context.zone.iso(view.updatedAt)))</td><td>"
      if mayChange(view, context) {
        html += #"<form class="inline" method="post" action="/views/save">\#(csrfField(context))"#
        html += #"<input type="hidden" name="id" value="\#(view.id)">"#
        html +=
          #"<input name="name" value="\#(SVG.escape(view.name))" aria-label="New name"><button>Rename</button></form>"#
        html += #"<form class="inline" method="post" action="/views/delete">\#(csrfField(context))"#
        html += #"<input type="hidden" name="id" value="\#(view.id)"><button>Delete</button></form>"#
      }
      html += "</td></tr>"
    }
    html += "</tbody></table></div>"
    return page("Saved", body: card("Saved searches and reports", html), context: context)
  }

  /// Whether the viewer may rename, change or delete `view`: its creator, or an admin.
  public static func mayChange(_ view: SavedView, _ context: Context) -> Bool {
    !context.csrf.isEmpty && (context.isAdmin || view.createdBy == context.viewer)
  }

  /// The form that saves the page with its filters (``Context/pageQuery``) under a name; on a view
  /// opened from its link, it saves that view again unless "as new" is ticked.
  static func saveForm(_ context: Context) -> String {
    guard !context.csrf.isEmpty, context.isSavable, context.page != .saved, context.page != .audit else { return "" }
    var form = #"<form method="post" action="/views/save">\#(csrfField(context))"#
    form += #"<input type="hidden" name="path" value="\#(SVG.escape(context.path))">"#
    form += #"<input type="hidden" name="query" value="\#(SVG.escape(context.pageQuery))">"#
    form += #"<input type="hidden" name="app" value="\#(SVG.escape(context.app))">"#
    let name = context.openView?.name ?? ""
    form += #"<label>Name <input name="name" value="\#(SVG.escape(name))" required maxlength="200"></label>"#
    if let view = context.openView, mayChange(view, context) {
      form += #"<input type="hidden" name="id" value="\#(view.id)">"#
      form += #"<label><span><input type="checkbox" name="copy" value="1"> as a new view</span></label>"#
    }
    form += "<button>Save</button></form>"
    return card("Save this view", form)
  }

  private static func csrfField(_ context: Context) -> String {
    #"<input type="hidden" name="csrf" value="\#(SVG.escape(context.csrf))">"#
  }
}
