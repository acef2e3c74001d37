import Mustache

/// The console's pages: Mustache templates rendered on the server, a shared head and
/// navigation as partials, no script and nothing fetched from elsewhere.
enum ConsolePages {
    static let library: MustacheLibrary = {
        var library = MustacheLibrary()
        for (name, text) in templates {
            // The templates are part of the program: one that does not parse is a bug.
            do { try library.register(text, named: name) } catch { fatalError("console template \(name): \(error)") }
        }
        return library
    }()

    /// Renders a page; `values` are HTML-escaped where the template uses `{{…}}`.
    static func render(_ name: String, _ values: [String: Any]) -> String {
        library.render(values, withTemplate: name) ?? ""
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
        "project": """
        {{> head}}
        <h1>{{project}}</h1>
        <section aria-labelledby="compose">
        <h2 id="compose">Compose a notification</h2>
        <form method="post" action="/console/projects/{{project}}/send">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <label for="target">Send to</label>
        <select id="target" name="target"><option value="topic">Topic</option><option value="token">Registration token</option>
        <option value="condition">Condition</option></select>
        <label for="to">Topic, token or condition</label><input id="to" name="to" required>
        <label for="title">Title</label><input id="title" name="title">
        <label for="body">Text</label><textarea id="body" name="body" rows="3"></textarea>
        <label for="data">Custom data (one key=value per line)</label><textarea id="data" name="data" rows="3"></textarea>
        <button type="submit">Send now</button>
        </form>
        </section>
        <section aria-labelledby="limits">
        <h2 id="limits">Limits</h2>
        <table><thead><tr><th scope="col">Limit</th><th scope="col">Setting</th></tr></thead>
        <tbody>{{#limits}}<tr><td>{{name}}</td><td>{{value}}</td></tr>{{/limits}}</tbody></table>
        </section>
        {{> foot}}
        """,
        "sent": """
        {{> head}}
        <section>
        <h1>{{project}}</h1>
        {{#name}}<p class="ok" role="status">Sent: {{name}}</p>{{/name}}
        {{#error}}<p class="error" role="alert">Not sent: {{error}}</p>{{/error}}
        <p><a href="/console/projects/{{project}}">Back to the project</a></p>
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
