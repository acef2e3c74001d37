import Mustache

/// The console's pages: Mustache templates rendered on the server, a shared head and
/// navigation as partials, no script and nothing fetched from elsewhere.
enum ConsolePages {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in templates.merging(projectTemplates, uniquingKeysWith: { first, _ in first }) {
            // The templates are part of the program: one that does not parse is a bug.
            do { try library.register(text, named: name) } catch { fatalError("console template \(name): \(error)") }
        }
        return library
    }()

    /// Renders a page; `values` are HTML-escaped where the template uses `{{…}}`.
    /// An absent optional is left out, so that a section such as `{{#error}}` is skipped for it.
    static func render(_ name: String, _ values: [String: Any]) -> String {
        let present = values.filter { _, value in
            let mirror = Mirror(reflecting: value)
            return mirror.displayStyle != .optional || !mirror.children.isEmpty
        }
        return library.render(present, withTemplate: name) ?? ""
    }

    static let templates: [String: String] = [
        "head": """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · Herald console</title>
        <style>
        body { font: 15px/1.45 system-ui, sans-serif; margin: 0; color: #1d2330; background: #f6f7f9; }
        header { background: #1d2330; color: #fff; padding: .6rem 1.2rem; display: flex; gap: 1rem; align-items: center; }
        header a { color: #fff; } header form { margin-left: auto; }
        main { max-width: 60rem; margin: 1.2rem auto; padding: 0 1.2rem; }
        section { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: 1rem 1.2rem; margin-bottom: 1rem; }
        label { display: block; margin: .5rem 0 .15rem; font-weight: 600; }
        input, select, textarea { font: inherit; padding: .3rem .4rem; width: 100%; box-sizing: border-box; }
        button { font: inherit; padding: .35rem .9rem; margin-top: .8rem; cursor: pointer; }
        table { border-collapse: collapse; width: 100%; } td, th { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid #eef0f3; }
        .error { color: #a40000; font-weight: 600; } .ok { color: #0a6b2d; font-weight: 600; }
        :focus-visible { outline: 3px solid #2f6fde; outline-offset: 2px; }
        .grid { display: grid; grid-template-columns: 1fr 1fr; gap: 0 1rem; } .grid3 { display: grid; grid-template-columns: repeat(3, 1fr); gap: 0 1rem; }
        fieldset { border: 1px solid #dde1e7; border-radius: 6px; } legend { font-weight: 600; }
        .tabs { list-style: none; display: flex; gap: .4rem; padding: 0; flex-wrap: wrap; }
        .tabs a { display: block; padding: .3rem .8rem; border-radius: 4px; background: #fff; border: 1px solid #dde1e7; }
        .tabs a[aria-current] { background: #1d2330; color: #fff; }
        pre { background: #f1f3f6; padding: .6rem; overflow-x: auto; font-size: 13px; }
        .charts { display: flex; flex-wrap: wrap; gap: .8rem; } figure { margin: 0; }
        .hidden { position: absolute; left: -10000px; }
        </style>
        </head>
        <body>
        <header><strong>Herald console</strong>{{#user}}<a href="/console">Projects</a>
        <form method="post" action="/console/sign-out"><input type="hidden" name="csrf" value="{{csrf}}">
        <span>{{user}}</span> <button type="submit">Sign out</button></form>{{/user}}</header>
        <main>
        """,
        "foot": """
        </main>
        </body>
        </html>
        """,
        "sign-in": """
        {{> head}}
        <section>
        <h1>Sign in</h1>
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <form method="post" action="/console/sign-in">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="name">Name</label><input id="name" name="name" autocomplete="username" required autofocus>
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required>
        <button type="submit">Sign in</button>
        </form>
        </section>
        {{> foot}}
        """,
        "projects": """
        {{> head}}
        <section>
        <h1>Projects</h1>
        {{^projects}}<p>No project has been given to you yet.</p>{{/projects}}
        <ul>{{#projects}}<li><a href="/console/projects/{{id}}">{{id}}</a> (sender id {{number}})</li>{{/projects}}</ul>
        </section>
        {{> foot}}
        """,
        "refused": """
        {{> head}}
        <section><h1>{{title}}</h1><p>{{reason}}</p><p><a href="/console">Projects</a></p></section>
        {{> foot}}
        """,
    ]
}
